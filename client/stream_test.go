package client_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/client"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/voice"
)

// voiceDemo is the demo with bench speech: a synthesizer of half a second of audio per
// sentence at 16 kHz, and a transcriber that hears heard.
func voiceDemo(t *testing.T, heard string, synthDelay time.Duration) *demo {
	t.Helper()
	return newDemo(t, engine.Config{
		Synthesizer: &enginetest.BenchSynthesizer{Delay: synthDelay, Duration: 500 * time.Millisecond, SampleRate: 16000},
		Transcriber: &enginetest.BenchTranscriber{Transcript: heard},
	})
}

func openStream(t *testing.T, c *client.Client, opts *client.StreamOptions) *client.Stream {
	t.Helper()
	s, err := c.Stream(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// voiceTurn reads one turn's events up to done, checking their order: transcript first,
// speak and audio, spec, done.
type voiceTurn struct {
	transcript *client.TranscriptEvent
	speak      strings.Builder
	audio      []*client.AudioEvent
	spec       *client.SpecEvent
	done       *client.DoneEvent
}

func readTurn(t *testing.T, s *client.Stream) *voiceTurn {
	t.Helper()
	var (
		vt    voiceTurn
		names []string
	)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for ev, err := range s.Events(ctx) {
		if err != nil {
			t.Fatalf("after %v: %v", names, err)
		}
		names = append(names, ev.EventName())
		switch ev := ev.(type) {
		case *client.TranscriptEvent:
			if len(names) != 1 {
				t.Fatalf("transcript after %v", names)
			}
			vt.transcript = ev
		case *client.SpeakEvent:
			vt.speak.WriteString(ev.Delta)
		case *client.AudioEvent:
			if ev.Seq != len(vt.audio)+1 || ev.SampleRate != 16000 || len(ev.PCM) == 0 {
				t.Errorf("audio %d: seq %d, %d Hz, %d bytes", len(vt.audio)+1, ev.Seq, ev.SampleRate, len(ev.PCM))
			}
			vt.audio = append(vt.audio, ev)
		case *client.SpecEvent:
			vt.spec = ev
		case *client.DoneEvent:
			if vt.transcript == nil || vt.spec == nil {
				t.Fatalf("done after %v", names)
			}
			vt.done = ev
			return &vt
		default:
			t.Fatalf("unexpected %T %+v after %v", ev, ev, names)
		}
	}
	t.Fatalf("the socket ended after %v", names)
	return nil
}

// check asserts a turn that answered heard with a balance, spoken.
func (vt *voiceTurn) check(t *testing.T, heard string) {
	t.Helper()
	if vt.transcript.Text != heard || vt.transcript.TurnID == "" || vt.done.TurnID != vt.transcript.TurnID {
		t.Errorf("transcript %+v, done %q", vt.transcript, vt.done.TurnID)
	}
	if !strings.Contains(vt.spec.Spec.Speak, "$") || vt.speak.String() != vt.spec.Spec.Speak ||
		vt.done.Spec.Speak != vt.spec.Spec.Speak || vt.spec.Spec.Meta.TurnID != vt.done.TurnID {
		t.Errorf("speak %q, spec %+v, done %+v", vt.speak.String(), vt.spec.Spec, vt.done.Spec)
	}
	var audio time.Duration
	for _, a := range vt.audio {
		audio += a.Duration()
	}
	// Half a second per sentence.
	if audio < 500*time.Millisecond || audio%(500*time.Millisecond) != 0 {
		t.Errorf("%v of audio in %d events", audio, len(vt.audio))
	}
}

func TestStreamTypedTurn(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	d := voiceDemo(t, "", 0)
	s := openStream(t, d.client(nil), &client.StreamOptions{Context: &client.StreamContext{SessionID: "conv-1", Locale: "en-US"}})
	for range 2 { // the socket holds one turn after another
		if err := s.SendText(t.Context(), "what is my balance"); err != nil {
			t.Fatal(err)
		}
		vt := readTurn(t, s)
		vt.check(t, "what is my balance")
		if vt.spec.Spec.Meta.ConversationID != "conv-1" {
			t.Errorf("conversation %q", vt.spec.Spec.Meta.ConversationID)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if _, err := s.Next(t.Context()); !errors.Is(err, client.ErrStreamClosed) {
		t.Errorf("Next after Close: %v", err)
	}
	if err := s.SendText(t.Context(), "hello"); !errors.Is(err, client.ErrStreamClosed) {
		t.Errorf("SendText after Close: %v", err)
	}
	d.Close()
}

func TestStreamAudioTurn(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	d := voiceDemo(t, "what is my balance", 0)
	s := openStream(t, d.client(nil), nil)
	// A second and a half of sound, a tone after silence: three audio messages.
	if err := s.SendAudio(t.Context(), audio.AppendPCM(nil, toneAfterSilence(24000, 16000))); err != nil {
		t.Fatal(err)
	}
	if err := s.EndOfSpeech(t.Context()); err != nil {
		t.Fatal(err)
	}
	readTurn(t, s).check(t, "what is my balance")
	if err := s.SendAudio(t.Context(), make([]byte, 3)); !errors.Is(err, client.ErrOddAudio) {
		t.Errorf("odd audio: %v", err)
	}
	s.Close()
	d.Close()
}

// TestStreamSendWAV sends a recording made at 48 kHz: the engine hears one second at 16 kHz.
func TestStreamSendWAV(t *testing.T) {
	heard := make(chan int, 1)
	d := newDemo(t, engine.Config{Transcriber: transcriberFunc(func(_ context.Context, pcm []int16, rate int, _ string) (string, error) {
		heard <- len(pcm) * 16000 / rate
		return "what is my balance", nil
	})})
	s := openStream(t, d.client(nil), nil)
	if err := s.SendWAV(t.Context(), bytes.NewReader(audio.EncodeWAV(toneAfterSilence(48000, 48000), 48000))); err != nil {
		t.Fatal(err)
	}
	// The engine's detector keeps the tone and 200 ms around it: 0.9 s at 16 kHz.
	if n := <-heard; n < 14000 || n > 15000 {
		t.Errorf("the engine heard %d samples at 16 kHz, want the tone's 0.9 s", n)
	}
	stereo := audio.AppendWAVHeader(nil, 16000, 4)
	binary.LittleEndian.PutUint16(stereo[22:], 2)     // channels
	binary.LittleEndian.PutUint32(stereo[28:], 64000) // byte rate
	binary.LittleEndian.PutUint16(stereo[32:], 4)     // block align
	if err := s.SendWAV(t.Context(), bytes.NewReader(stereo)); err == nil || !strings.Contains(err.Error(), "mono") {
		t.Error("a stereo WAV was sent")
	}
	long := audio.EncodeWAV(make([]int16, 61*8000), 8000)
	if err := s.SendWAV(t.Context(), bytes.NewReader(long)); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("61 s of audio: %v", err)
	}
}

// transcriberFunc is a Transcriber made of a function.
type transcriberFunc func(ctx context.Context, pcm []int16, rate int, locale string) (string, error)

func (f transcriberFunc) Transcribe(ctx context.Context, pcm []int16, rate int, locale string) (string, error) {
	return f(ctx, pcm, rate, locale)
}

func TestStreamCancel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	d := voiceDemo(t, "", time.Hour) // the answer waits for its audio until cancelled
	s := openStream(t, d.client(nil), nil)
	if err := s.SendText(t.Context(), "what is my balance"); err != nil {
		t.Fatal(err)
	}
	var turnID string
	for ev, err := range s.Events(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev := ev.(type) {
		case *client.TranscriptEvent:
			turnID = ev.TurnID
			if err := s.Cancel(t.Context()); err != nil {
				t.Fatal(err)
			}
			continue
		case *client.SpeakEvent:
			continue
		case *client.CancelledEvent:
			if ev.TurnID != turnID || turnID == "" {
				t.Errorf("cancelled %q, turn %q", ev.TurnID, turnID)
			}
		default:
			t.Fatalf("%T before cancelled", ev)
		}
		break
	}
	// Nothing is running now: a cancel is answered without a turn.
	if err := s.Cancel(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ev, err := s.Next(t.Context()); err != nil || ev.(*client.CancelledEvent).TurnID != "" {
		t.Errorf("%+v, %v", ev, err)
	}
	s.Close()
	d.Close()
}

func TestStreamErrors(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	d := voiceDemo(t, "", 0) // hears nothing in any audio
	s := openStream(t, d.client(nil), nil)
	for _, c := range []struct {
		name string
		send func() error
		code string
	}{
		{"end of speech without audio", func() error { return s.EndOfSpeech(t.Context()) }, engine.CodeNoSpeech},
		{"nothing heard", func() error {
			if err := s.SendAudio(t.Context(), make([]byte, 3200)); err != nil {
				return err
			}
			return s.EndOfSpeech(t.Context())
		}, engine.CodeNoSpeech},
		{"invalid locale", func() error {
			if err := s.SetContext(&client.StreamContext{Locale: "not a locale"}); err != nil {
				return err
			}
			return s.SendText(t.Context(), "hello")
		}, engine.CodeInvalidRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.send(); err != nil {
				t.Fatal(err)
			}
			for ev, err := range s.Events(t.Context()) {
				if err != nil {
					t.Fatal(err)
				}
				if e, ok := ev.(*client.ErrorEvent); ok {
					if e.Code != c.code || e.Message == "" {
						t.Errorf("error %+v, want %s", e, c.code)
					}
					return
				}
			}
		})
	}
	if err := s.SendText(t.Context(), strings.Repeat("x", client.MaxStreamMessage)); !errors.Is(err, client.ErrMessageTooLarge) {
		t.Errorf("a message over the limit: %v", err)
	}
	s.Close()
	d.Close()
}

func TestStreamRefused(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	d := voiceDemo(t, "", 0)
	for _, c := range []struct {
		name   string
		opts   client.Options
		status int
		code   string
	}{
		{"unknown key", client.Options{EngineKey: "pk_nobody"}, http.StatusUnauthorized, engine.CodeUnknownEngineKey},
		{"bad request id", client.Options{NewRequestID: func() string { return "a b" }}, http.StatusBadRequest, engine.CodeInvalidRequestID},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := d.client(&c.opts).Stream(t.Context(), nil)
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Status != c.status || ce.Code != c.code || s != nil {
				t.Fatalf("%v (%#v)", err, ce)
			}
		})
	}
	d.Close()
}

func TestStreamBoundSession(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	d := newDemo(t, engine.Config{SessionLifetime: time.Hour, Synthesizer: &enginetest.BenchSynthesizer{Duration: 500 * time.Millisecond, SampleRate: 16000}})
	c := d.client(nil)
	if _, err := c.CreateSession(t.Context(), &client.SessionOptions{Bind: true}); err != nil {
		t.Fatal(err)
	}
	s := openStream(t, c, nil)
	if got := d.scheme(client.PathStream); got != "DPoP" {
		t.Errorf("the upgrade was authenticated with %q", got)
	}
	if err := s.SendText(t.Context(), "what is my balance"); err != nil {
		t.Fatal(err)
	}
	readTurn(t, s).check(t, "what is my balance")
	s.Close()

	// An expired session is created again, once, for the upgrade.
	first := c.Session()
	d.clock.Add(2 * time.Hour)
	s = openStream(t, c, nil)
	if second := c.Session(); second == first || second.Thumbprint() != first.Thumbprint() ||
		d.count(client.PathCreateSession) != 2 || d.count(client.PathStream) != 3 {
		t.Errorf("sessions %v then %v; requests %v", first, second, d.counts)
	}
	if err := s.SendText(t.Context(), "what is my balance"); err != nil {
		t.Fatal(err)
	}
	readTurn(t, s).check(t, "what is my balance")
	s.Close()
	d.Close()
}

// A socket the app does not read between turns still answers the engine's pings, so the
// engine keeps it open; a Next whose context ends leaves the socket usable.
func TestStreamAnswersPingsBetweenTurns(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	d := newDemo(t, engine.Config{
		Synthesizer: &enginetest.BenchSynthesizer{Duration: 500 * time.Millisecond, SampleRate: 16000},
	}, &voice.Options{PingInterval: 20 * time.Millisecond})
	s := openStream(t, d.client(nil), nil)
	time.Sleep(300 * time.Millisecond) // fifteen pings, none read by the app
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	_, err := s.Next(ctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next with nothing to read: %v", err)
	}
	if err := s.SendText(t.Context(), "what is my balance"); err != nil {
		t.Fatal(err)
	}
	readTurn(t, s).check(t, "what is my balance")
	s.Close()
	d.Close()
}

// toneAfterSilence is n samples at rate: a quarter of silence, half a 440 Hz tone, a quarter of
// silence. The engine's speech detector takes the tone for speech; a tone from the first
// sample would be the background it measures everything against.
func toneAfterSilence(n, rate int) []int16 {
	pcm := make([]int16, n)
	for i := n / 4; i < n-n/4; i++ {
		pcm[i] = int16(8000 * math.Sin(2*math.Pi*440*float64(i)/float64(rate)))
	}
	return pcm
}
