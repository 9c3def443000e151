package otel

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/convengine/engine"
)

// A turn's audio is transcribed before the turn starts, so its transcription span would have
// no parent. It is held here, by request id, until the turn of that request starts: the turn's
// span then starts when the transcription did, with the transcription as its first child. One
// that no turn claims (the turn was refused once its audio was heard) is ended alone when a
// later transcription finds it older than heldFor, or more than maxHeld wait; a failed one is
// ended at once. What is held when the process stops is not exported.
const (
	maxHeld = 1024
	heldFor = time.Minute
)

type heardAudio struct {
	e          engine.SpeechEvent
	start, end time.Time
}

type heldTranscriptions struct {
	mu sync.Mutex
	m  map[string]heardAudio
}

// hold keeps h for the turn of its request, and returns those it let go of to be ended alone.
func (hs *heldTranscriptions) hold(h heardAudio) (expired []heardAudio) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.m == nil {
		hs.m = map[string]heardAudio{}
	}
	if old, ok := hs.m[h.e.RequestID]; ok {
		expired = append(expired, old)
	}
	hs.m[h.e.RequestID] = h
	for id, o := range hs.m {
		if h.end.Sub(o.end) > heldFor || len(hs.m) > maxHeld {
			expired = append(expired, o)
			delete(hs.m, id)
		}
	}
	return expired
}

// take returns the transcription held for requestID, if any.
func (hs *heldTranscriptions) take(requestID string) (heardAudio, bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	h, ok := hs.m[requestID]
	if ok {
		delete(hs.m, requestID)
	}
	return h, ok
}

// heldBeforeTheTurn reports whether the transcription e belongs to a turn not started yet:
// one that worked (a failed one has no turn), with a request id and no span in ctx.
func heldBeforeTheTurn(ctx context.Context, e engine.SpeechEvent) bool {
	return e.Kind == "transcription" && !e.Err && e.RequestID != "" && !trace.SpanFromContext(ctx).SpanContext().IsValid()
}
