package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine/client"
)

// voiceMode runs voice turns on the socket (WebSocket /engine/stream). Each worker opens one
// socket when it is prepared and keeps it for the phase; an operation is one turn: the
// utterance's audio (or, with -voice-text, the text) then end_of_speech. Its first latency runs
// from end_of_speech sent to the first audio message received, its total to done.
type voiceMode struct {
	cfg *config

	once sync.Once
	pcm  []byte // the utterance, shared by the workers
}

func (m *voiceMode) describe() string {
	if m.cfg.voiceText {
		return "a typed turn on the voice socket (WebSocket /engine/stream), timed from the text sent"
	}
	return fmt.Sprintf("a voice turn (WebSocket /engine/stream): %s of audio, then end_of_speech, timed from it", m.cfg.utterance)
}

func (m *voiceMode) worker(ctx context.Context, t *target, s slot) (worker, error) {
	m.once.Do(func() { m.pcm = tone(m.cfg.utterance) })
	c, err := m.cfg.newClient(t)
	if err != nil {
		return nil, err
	}
	// Each socket is a user of its own, as on a real deployment, where a user holds few.
	ctx = withUserToken(ctx, m.cfg.socketUser(s))
	if err := m.cfg.startSession(ctx, c); err != nil {
		return nil, err
	}
	w := &voiceWorker{c: c, pcm: m.pcm, timeout: m.cfg.timeout}
	if m.cfg.voiceText {
		w.text = m.cfg.say
	}
	if w.st, err = c.Stream(ctx, nil); err != nil {
		return nil, fmt.Errorf("opening the voice socket: %w", err)
	}
	return w, nil
}

// tone is d of a quiet 440 Hz tone: 16-bit little-endian PCM, 16 kHz, mono.
func tone(d time.Duration) []byte {
	n := int(d.Seconds() * 16000)
	b := make([]byte, 2*n)
	// A quarter of silence first: the engine's speech detector learns the background from the
	// audio, and a sound that never changes is background, not speech.
	for i := n / 4; i < n; i++ {
		v := int16(2000 * math.Sin(2*math.Pi*440*float64(i)/16000))
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	}
	return b
}

type voiceWorker struct {
	c       *client.Client
	st      *client.Stream // nil after the socket failed: the next turn opens another
	pcm     []byte
	text    string
	timeout time.Duration
}

func (w *voiceWorker) do(ctx context.Context, start time.Time) (sample, error) {
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	if w.st == nil {
		st, err := w.c.Stream(ctx, nil)
		if err != nil {
			return sample{total: time.Since(start), code: socketErrorCode(err)}, nil
		}
		w.st = st
	}
	var err error
	if w.text != "" {
		err = w.st.SendText(ctx, w.text)
	} else if err = w.st.SendAudio(ctx, w.pcm); err == nil {
		err = w.st.EndOfSpeech(ctx)
	}
	// The latencies run from end_of_speech sent; an operation that started late (open loop)
	// counts its lateness too.
	from := time.Now().Add(-began.Sub(start))
	if err != nil {
		return w.failed(from, err), nil
	}
	var (
		s     sample
		heard bool
	)
	for {
		ev, err := w.st.Next(ctx)
		if err != nil {
			return w.failed(from, err), nil
		}
		switch ev := ev.(type) {
		case *client.TranscriptEvent:
			heard = true
		case *client.AudioEvent:
			if s.first == 0 {
				s.first = time.Since(from)
			}
		case *client.ErrorEvent:
			if s.code == "" {
				s.code = ev.Code
			}
			if !heard { // an error before the transcript ends the turn
				s.total = time.Since(from)
				return s, nil
			}
		case *client.CancelledEvent:
			s.code, s.total = "cancelled", time.Since(from)
			return s, nil
		case *client.DoneEvent:
			s.total = time.Since(from)
			if s.first == 0 && s.code == "" {
				s.code = "no_audio"
			}
			return s, nil
		}
	}
}

// failed closes a socket that failed and describes the failure.
func (w *voiceWorker) failed(from time.Time, err error) sample {
	w.st.Close()
	w.st = nil
	return sample{total: time.Since(from), code: socketErrorCode(err)}
}

// Close closes the worker's socket.
func (w *voiceWorker) Close() error {
	if w.st == nil {
		return nil
	}
	return w.st.Close()
}

// closeWorkers closes the workers that hold something open (the sockets of voice and idle),
// 64 at a time.
func closeWorkers(workers []worker) {
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for _, w := range workers {
		if c, ok := w.(io.Closer); ok {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				c.Close()
			})
		}
	}
	wg.Wait()
}

// socketErrorCode classifies a failure of a socket: "closed_<code>" when the server closed it
// with a close code, else as errorCode does.
func socketErrorCode(err error) string {
	if code := websocket.CloseStatus(err); code != -1 {
		return "closed_" + strconv.Itoa(int(code))
	}
	if errors.Is(err, client.ErrStreamClosed) {
		return "closed"
	}
	return errorCode(err)
}
