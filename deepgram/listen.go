package deepgram

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/internal/cloudspeech"
)

// keepAlive is how long the connection may go without audio before a KeepAlive is sent:
// Deepgram closes a connection that received nothing for 10 s (NET-0001).
const keepAlive = 5 * time.Second

// Listen implements [engine.StreamingTranscriber]: it opens a live connection in the
// background and returns at once; audio written before it is open waits for it. ctx bounds the
// utterance: its end closes the connection.
func (t *Transcriber) Listen(ctx context.Context, tenant *engine.Tenant, rate int, locale string) (engine.Listening, error) {
	if err := checkRate(rate); err != nil {
		return nil, err
	}
	q := t.query(tenant, rate, locale)
	q.Set("interim_results", "true")
	q.Set("endpointing", fmt.Sprint(t.o.Endpointing.Milliseconds()))
	q.Set("utterance_end_ms", fmt.Sprint(max(t.o.UtteranceEnd.Milliseconds(), 1000))) // Deepgram's least
	ctx, cancel := context.WithCancel(ctx)
	l := &listening{t: t, ctx: ctx, cancel: cancel, maxQueued: 2 * rate * 60,
		wake: make(chan struct{}, 1), final: make(chan struct{}), done: make(chan struct{})}
	go l.run(cloudspeech.WebSocketURL(t.base, "/v1/listen?"+q.Encode()))
	return l, nil
}

// listening is one utterance on a live connection. The run goroutine opens the connection and
// writes to it; a reader goroutine reads Deepgram's messages.
type listening struct {
	t         *Transcriber
	ctx       context.Context
	cancel    context.CancelFunc
	maxQueued int
	wake      chan struct{} // audio was queued, or the audio ended
	final     chan struct{} // closed when the transcript is complete, or cannot be
	done      chan struct{} // closed when run ended

	mu        sync.Mutex
	queue     [][]byte
	queued    int // bytes ever queued
	finishing bool
	finals    []segment
	interim   string
	ended     bool
	finalOnce sync.Once
	err       error // why the connection failed before the final result
}

// segment is a final result: its text and where it starts in the audio.
type segment struct {
	start float64
	text  string
}

func (l *listening) Write(pcm []int16) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.finishing:
		return errors.New("deepgram: audio written after Finish")
	case l.err != nil:
		return l.err
	case l.queued+2*len(pcm) > l.maxQueued:
		return errors.New("deepgram: an utterance holds at most 60 seconds of audio")
	}
	l.queue = append(l.queue, audio.AppendPCM(nil, pcm))
	l.queued += 2 * len(pcm)
	l.signal()
	return nil
}

func (l *listening) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *listening) Heard() (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.transcript(true), l.ended
}

// transcript joins the final results in the order of their start, and the interim one.
func (l *listening) transcript(interim bool) string {
	parts := make([]string, 0, len(l.finals)+1)
	for _, s := range l.finals {
		parts = append(parts, s.text)
	}
	if interim && l.interim != "" {
		parts = append(parts, l.interim)
	}
	return strings.Join(parts, " ")
}

func (l *listening) Finish(ctx context.Context) (string, error) {
	l.mu.Lock()
	l.finishing = true
	l.signal()
	l.mu.Unlock()
	timer := time.NewTimer(l.t.o.FinalTimeout)
	defer timer.Stop()
	select {
	case <-l.final:
	case <-ctx.Done():
		return "", ctx.Err()
	case <-timer.C:
		l.fail(fmt.Errorf("%w within %s of the end of speech", ErrNoFinal, l.t.o.FinalTimeout))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return "", l.err
	}
	cloudspeech.Name(ctx, "deepgram")
	return l.transcript(false), nil
}

func (l *listening) Close() error {
	l.cancel()
	return nil
}

// fail records why no final result will come, if nothing ended the transcript before.
func (l *listening) fail(err error) {
	l.mu.Lock()
	select {
	case <-l.final:
	default:
		if l.err == nil {
			l.err = err
		}
	}
	l.mu.Unlock()
	l.complete()
}

func (l *listening) complete() { l.finalOnce.Do(func() { close(l.final) }) }

func (l *listening) run(u string) {
	defer close(l.done)
	defer l.cancel()
	dctx, cancel := context.WithTimeout(l.ctx, l.t.o.Timeout)
	opts := &websocket.DialOptions{HTTPHeader: l.t.header()}
	if l.t.o.HTTPClient.Timeout == 0 {
		opts.HTTPClient = l.t.o.HTTPClient
	}
	conn, resp, err := websocket.Dial(dctx, u, opts)
	cancel()
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			// The upgrade's answer: 401 for a wrong key, 429 over the account's streams, 5xx.
			e := &cloudspeech.StatusError{Provider: "deepgram", Status: resp.StatusCode}
			e.Code = cloudspeech.Printable(resp.Header.Get("dg-error"), 64)
			l.fail(fmt.Errorf("%w: %w", ErrNoFinal, e))
		} else {
			l.fail(fmt.Errorf("%w: connecting: %w", ErrNoFinal, err))
		}
		return
	}
	conn.SetReadLimit(l.t.o.MaxMessage)
	read := make(chan struct{})
	go func() {
		defer close(read)
		l.read(conn)
	}()
	l.write(conn, read)
	// CloseStream asks Deepgram to end the stream; the connection goes at once after it.
	wctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_ = conn.Write(wctx, websocket.MessageText, []byte(`{"type":"CloseStream"}`))
	cancel()
	conn.CloseNow()
	<-read
}

// write sends the audio as it is queued, and at its end Finalize and CloseStream, until the
// utterance is over or the connection fails.
func (l *listening) write(conn *websocket.Conn, read <-chan struct{}) {
	send := func(typ websocket.MessageType, b []byte) bool {
		ctx, cancel := context.WithTimeout(l.ctx, l.t.o.Timeout)
		defer cancel()
		if err := conn.Write(ctx, typ, b); err != nil {
			// The reader knows better why the connection failed (Deepgram's close status),
			// when it does at once.
			select {
			case <-read:
			case <-time.After(100 * time.Millisecond):
			}
			l.fail(fmt.Errorf("%w: sending: %w", ErrNoFinal, err))
			return false
		}
		return true
	}
	idle := time.NewTimer(keepAlive)
	defer idle.Stop()
	finalized := false
	for {
		l.mu.Lock()
		queue, finishing := l.queue, l.finishing
		l.queue = nil
		l.mu.Unlock()
		for _, b := range queue {
			if !send(websocket.MessageBinary, b) {
				return
			}
		}
		if len(queue) > 0 {
			idle.Reset(keepAlive)
		}
		if finishing && !finalized {
			finalized = true
			// Finalize flushes what Deepgram holds as final results, the last marked
			// from_finalize; CloseStream then ends the stream with its Metadata.
			if !send(websocket.MessageText, []byte(`{"type":"Finalize"}`)) || !send(websocket.MessageText, []byte(`{"type":"CloseStream"}`)) {
				return
			}
		}
		select {
		case <-l.wake:
		case <-idle.C:
			if !send(websocket.MessageText, []byte(`{"type":"KeepAlive"}`)) {
				return
			}
			idle.Reset(keepAlive)
		case <-read:
			return
		case <-l.ctx.Done():
			return
		}
	}
}

// message is any of Deepgram's messages: Results, UtteranceEnd, Metadata, SpeechStarted,
// Error.
type message struct {
	Type         string  `json:"type"`
	Start        float64 `json:"start"`
	IsFinal      bool    `json:"is_final"`
	SpeechFinal  bool    `json:"speech_final"`
	FromFinalize bool    `json:"from_finalize"`
	Channel      struct {
		Alternatives []alternative `json:"alternatives"`
	} `json:"channel"`
	Description string `json:"description"`
	Variant     string `json:"variant"`
}

// read reads Deepgram's messages until the connection ends.
func (l *listening) read(conn *websocket.Conn) {
	for {
		ctx, cancel := context.WithTimeout(l.ctx, l.t.o.ReadTimeout)
		typ, data, err := conn.Read(ctx)
		cancel()
		if err != nil {
			l.mu.Lock()
			finishing := l.finishing
			l.mu.Unlock()
			switch {
			case finishing && websocket.CloseStatus(err) == websocket.StatusNormalClosure:
				l.complete() // Deepgram closed the stream after its last results
			case l.ctx.Err() != nil:
				l.fail(fmt.Errorf("%w: the utterance ended", ErrNoFinal))
			default:
				l.fail(fmt.Errorf("%w: the connection ended: %s", ErrNoFinal, closeReason(err)))
			}
			return
		}
		if typ != websocket.MessageText {
			continue
		}
		var m message
		if json.Unmarshal(data, &m) != nil {
			continue // not one of the documented messages
		}
		l.onMessage(&m)
	}
}

func (l *listening) onMessage(m *message) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch m.Type {
	case "Results":
		text := ""
		if len(m.Channel.Alternatives) > 0 {
			text = strings.TrimSpace(m.Channel.Alternatives[0].Transcript)
		}
		if !m.IsFinal {
			l.interim = text
			return
		}
		// Final results may come out of order, and one may come again for the same audio:
		// they are kept by their start, the later replacing the earlier.
		i, found := slices.BinarySearchFunc(l.finals, m.Start, func(s segment, start float64) int { return cmp.Compare(s.start, start) })
		switch {
		case found && text == "":
			l.finals = slices.Delete(l.finals, i, i+1)
		case found:
			l.finals[i].text = text
		case text != "":
			l.finals = slices.Insert(l.finals, i, segment{start: m.Start, text: text})
		}
		l.interim = ""
		if m.SpeechFinal && text != "" {
			l.ended = true
		}
		if m.FromFinalize {
			l.finalOnce.Do(func() { close(l.final) })
		}
	case "UtteranceEnd":
		l.ended = true
	case "Metadata":
		// Sent once the stream is closed, after the last results.
		if l.finishing {
			l.finalOnce.Do(func() { close(l.final) })
		}
	case "Error":
		if l.err == nil {
			l.err = fmt.Errorf("%w: deepgram: %s", ErrNoFinal, cloudspeech.Printable(cmp.Or(m.Variant, m.Description), 100))
		}
		l.finalOnce.Do(func() { close(l.final) })
	}
}

func closeReason(err error) string {
	if code := websocket.CloseStatus(err); code != -1 {
		return fmt.Sprintf("closed with status %d", code)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "no message within the read time-out"
	}
	if errors.Is(err, websocket.ErrMessageTooBig) {
		return "a message was too large"
	}
	return "connection lost"
}
