package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestVoiceModes drives the voice socket of an engine in process: typed turns with audio back,
// audio turns that the engine cannot hear (no transcriber: errors by code), and idle sockets.
func TestVoiceModes(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	url, stop := demoEngine(t)
	defer stop()

	rep := runJSON(t, "-target", url, "-q", "-mode", "voice", "-voice-text", "-n", "8", "-c", "2")
	if r := rep.Runs[0]; r.OK != 8 || r.Failed != 0 || r.First == nil || r.First.Count != 8 || r.Done.Count != 8 || r.Server != nil {
		t.Errorf("typed voice turns: %+v", r)
	}

	rep = runJSON(t, "-target", url, "-q", "-mode", "voice", "-n", "4", "-c", "2", "-utterance", "200ms")
	if r := rep.Runs[0]; r.OK != 0 || len(r.Errors) != 1 || r.Errors[0].Code != "transcriber_unavailable" || r.Errors[0].Count != 4 {
		t.Errorf("audio turns without a transcriber: %+v", r)
	}

	rep = runJSON(t, "-target", url, "-q", "-mode", "idle", "-n", "6", "-c", "3", "-hold", "50ms")
	r := rep.Runs[0]
	if r.OK != 6 || r.Failed != 0 || r.Sockets == nil || r.Sockets.Sockets != 3 || r.Sockets.MemoryOpen != 0 {
		t.Errorf("idle sockets: %+v, %+v", r, r.Sockets)
	}
}

// TestLocalVoice measures the voice socket of a -local engine: the engine's share of every
// turn's time to first audio, and the memory and goroutines of idle sockets.
func TestLocalVoice(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers as child processes")
	}
	rep := runJSON(t, "-local", "-mode", "voice", "-n", "12", "-c", "3", "-sentences", "3", "-deltas", "9",
		"-token-interval", "1ms", "-transcribe-delay", "1ms", "-synth-delay", "1ms", "-q")
	if len(rep.Runs) != 1 {
		t.Fatalf("report %+v", rep)
	}
	r := rep.Runs[0]
	if r.OK != 12 || r.Failed != 0 || r.First == nil || r.Added == nil || r.First.Count != 12 {
		t.Errorf("voice turns: %+v", r)
	}
	if s := r.Server; s == nil || s.FirstAudio == nil || s.FirstAudio.Count != 12 || !gone(s.PID) {
		t.Errorf("the engine's share: %+v", s)
	}

	rep = runJSON(t, "-local", "-mode", "idle", "-n", "20", "-c", "20", "-hold", "10ms", "-q")
	r = rep.Runs[0]
	sc := r.Sockets
	if r.OK != 20 || sc == nil || sc.Sockets != 20 || sc.ServerSockets != 20 || sc.GoroutinesPerSocket < 1 ||
		sc.MemoryOpen == 0 || sc.RSSOpen == 0 {
		t.Errorf("idle sockets: %+v, %+v", r, sc)
	}
}
