package main

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/deepgram"
	"github.com/convengine/engine/deepgram/deepgramtest"
	"github.com/convengine/engine/elevenlabs"
	"github.com/convengine/engine/elevenlabs/elevenlabstest"
	"github.com/convengine/engine/enginetest"
)

// benchTranscript is what the bench transcriber of a -local engine hears in any audio.
const benchTranscript = "what is my balance"

// benchSpeech returns the speech of a -local engine: a transcriber that hears benchTranscript
// and a synthesizer of one second of audio per sentence, after the configured delays.
func benchSpeech(cfg *config) (engine.Transcriber, engine.Synthesizer, error) {
	var synth engine.Synthesizer = &enginetest.BenchSynthesizer{Delay: cfg.synthDelay}
	if cfg.synthesizer == "elevenlabs" || cfg.synthesizer == "elevenlabs-http" {
		// ElevenLabs' stand-in, in this process, for the life of the process.
		xi := elevenlabstest.New("bench-key")
		xi.FirstByte = cfg.synthFirstByte
		el, err := elevenlabs.New(&elevenlabs.Options{APIKey: "bench-key", BaseURL: xi.URL})
		if err != nil {
			return nil, nil, err
		}
		synth = el
		if cfg.synthesizer == "elevenlabs-http" {
			synth = httpOnly{el}
		}
	}
	if cfg.recognizer == "bench" || cfg.recognizer == "" {
		return &enginetest.BenchTranscriber{Transcript: benchTranscript, Delay: cfg.transcribeDelay}, synth, nil
	}
	// Deepgram's stand-in, in this process, for the life of the process.
	dg := deepgramtest.New("bench-key")
	dg.Hear = func([]int16, int) string { return benchTranscript }
	dg.FinalLatency, dg.PrerecordedLatency = cfg.recognizerFinal, cfg.recognizerBatch
	tr, err := deepgram.New(&deepgram.Options{APIKey: "bench-key", BaseURL: dg.URL})
	if err != nil {
		return nil, nil, err
	}
	if cfg.recognizer == "deepgram-batch" {
		return batchOnly{tr}, synth, nil
	}
	return tr, synth, nil
}

// batchOnly hides a recogniser's streaming: utterances are heard after their end.
type batchOnly struct{ engine.Transcriber }

// httpOnly hides a voice's input stream: each sentence is a request of its own.
type httpOnly struct{ engine.Synthesizer }

// benchModel returns the bench model of a -local engine.
func benchModel(cfg *config) *enginetest.BenchModel {
	return &enginetest.BenchModel{FirstTokenDelay: cfg.firstToken, TokenInterval: cfg.tokenInterval,
		Deltas: cfg.deltas, Sentences: cfg.sentences, ToolCalls: cfg.toolCalls, Widgets: cfg.widgets}
}

// voiceOffset is the time the bench parts of a -local engine take, by their configuration,
// from a voice turn's end_of_speech to its first audio: the transcription (not for typed
// turns), the model until its first sentence is complete, and the synthesis of that sentence.
// What a voice turn takes beyond it is the engine's, and the transport's.
func voiceOffset(cfg *config) time.Duration {
	d := benchModel(cfg).FirstSentenceDelay() + cfg.synthDelay
	if cfg.synthesizer == "elevenlabs" || cfg.synthesizer == "elevenlabs-http" {
		d += cfg.synthFirstByte
	}
	if !cfg.voiceText {
		d += cfg.transcribeDelay
	}
	return d
}

// voiceTimer times, in a -local engine, the engine's share of each voice turn: from the
// client's last message (its end_of_speech, or its text) read off the connection to the
// turn's first audio message written to it, less voiceOffset. It also counts the open
// sockets. It sees the socket's bytes by wrapping the connection the handler hijacks; the
// engine's messages are not masked, so a frame's first bytes tell its type.
type voiceTimer struct {
	next   http.Handler
	offset time.Duration
	open   atomic.Int64
	times  *sharedHistogram
}

func newVoiceTimer(next http.Handler, cfg *config) *voiceTimer {
	return &voiceTimer{next: next, offset: voiceOffset(cfg), times: newSharedHistogram()}
}

func (v *voiceTimer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != engine.PathStream {
		v.next.ServeHTTP(w, r)
		return
	}
	v.next.ServeHTTP(&hijackTimer{ResponseWriter: w, v: v}, r)
}

// socket is the engine's Observer.Socket hook: it counts the open sockets.
func (v *voiceTimer) socket(_ context.Context, _ string, open bool) {
	if open {
		v.open.Add(1)
	} else {
		v.open.Add(-1)
	}
}

func (v *voiceTimer) record(d time.Duration) { v.times.record(max(d-v.offset, 0)) }

// summary digests the times so far, and forgets them when reset.
func (v *voiceTimer) summary(reset bool) Summary { return v.times.summary(reset) }

// hijackTimer hands the WebSocket library a timed connection when it hijacks.
type hijackTimer struct {
	http.ResponseWriter
	v *voiceTimer
}

func (h *hijackTimer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	tc := &timedConn{Conn: conn, v: h.v}
	tc.waiting.Store(true)
	// Reads of what the server had buffered go on through brw.Reader; the library reads the
	// rest from the connection returned. Writes go through the timed connection, from the
	// same buffer, so that the measurement costs the socket no memory.
	brw.Writer.Reset(tc)
	return tc, brw, nil
}

func (h *hijackTimer) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// timedConn notes when the client's bytes last arrived, and times the first audio message of
// each turn from then.
type timedConn struct {
	net.Conn
	v        *voiceTimer
	lastRead atomic.Int64 // unix nanoseconds
	waiting  atomic.Bool  // the next audio message is a turn's first
}

// The starts of the engine's messages, found within the first bytes of a frame.
var (
	audioStart     = []byte(`{"type":"audio"`)
	doneStart      = []byte(`{"type":"done"`)
	cancelledStart = []byte(`{"type":"cancelled"`)
)

func (c *timedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.lastRead.Store(time.Now().UnixNano())
	}
	return n, err
}

func (c *timedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	// A message's frame header is at most 14 bytes; each message is flushed by itself, so a
	// write that starts a message starts with its header.
	head := p[:min(len(p), 14+len(cancelledStart))]
	switch {
	case bytes.Contains(head, audioStart):
		if c.waiting.Swap(false) {
			c.v.record(time.Since(time.Unix(0, c.lastRead.Load())))
		}
	case bytes.Contains(head, doneStart), bytes.Contains(head, cancelledStart):
		c.waiting.Store(true)
	}
	return n, err
}
