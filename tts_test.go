package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/internal/proc"
)

func ttsBody(text string, voice ...string) string {
	m := map[string]string{"text": text}
	if len(voice) > 0 {
		m["voice"] = voice[0]
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func TestTTSStreamsWAV(t *testing.T) {
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Synthesizer: newEspeak(t)})
	for _, voice := range []string{"", "en-us", "es+Annie"} {
		t.Run(voice, func(t *testing.T) {
			body := ttsBody("Hello there. Your balance is $1,234.56.")
			if voice != "" {
				body = ttsBody("Hello there. Your balance is $1,234.56.", voice)
			}
			resp := h.do(t.Context(), http.MethodPost, engine.PathTTS, headers(), body)
			defer resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/wav" || resp.Header.Get("X-Request-Id") != "prod-test-1" {
				t.Fatalf("%d %s", resp.StatusCode, resp.Header)
			}
			wav, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			r := bytes.NewReader(wav)
			hdr, err := audio.ReadWAVHeader(r)
			if err != nil {
				t.Fatal(err)
			}
			if hdr.SampleRate != 22050 || hdr.Channels != 1 || hdr.BitsPerSample != 16 || hdr.DataSize != -1 {
				t.Errorf("header %+v", hdr)
			}
			rest, _ := io.ReadAll(r)
			pcm := audio.PCMFromBytes(rest)
			if secs := float64(len(pcm)) / 22050; secs < 1.5 || secs > 8 || loudest(pcm) < 1000 {
				t.Errorf("%.2f s of audio, loudest sample %d", secs, loudest(pcm))
			}
			// A player reads the streaming sizes as "to the end".
			if _, err := audio.DecodeWAV(audio.EncodeWAV(audio.Resample(pcm, 22050, 16000), 16000), 16000, 60); err != nil {
				t.Error(err)
			}
		})
	}
}

// choosingSynthesizer is a fakeSynthesizer with a voice per locale.
type choosingSynthesizer struct{ *fakeSynthesizer }

func (choosingSynthesizer) VoiceFor(locale string) string { return "voice-of-" + locale }

func TestTTSVoice(t *testing.T) {
	tenant := testTenant()
	tenant.Locale = "es-MX"
	synth := &fakeSynthesizer{Rate: 16000, Seconds: 0.1}
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Synthesizer: choosingSynthesizer{synth}}, tenant)
	say := func(body string) string {
		resp := h.do(t.Context(), http.MethodPost, engine.PathTTS, headers(), body)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || len(b) != 44+3200 {
			t.Fatalf("%d, %d bytes", resp.StatusCode, len(b))
		}
		return synth.LastVoice()
	}
	if v := say(ttsBody("hola")); v != "voice-of-es-MX" {
		t.Errorf("no voice anywhere: %q, want the synthesizer's for the tenant's locale", v)
	}
	if v := say(ttsBody("hola", " en-us ")); v != "en-us" {
		t.Errorf("the request's voice: %q", v)
	}
	tenant.Voice = "tenant-voice"
	if v := say(ttsBody("hola")); v != "tenant-voice" {
		t.Errorf("the tenant's voice: %q", v)
	}
	if v := say(ttsBody(strings.Repeat("ñ", 4000))); v != "tenant-voice" {
		t.Errorf("4000 characters: %q", v)
	}
}

func TestTTSFailures(t *testing.T) {
	synth := &fakeSynthesizer{Rate: 22050, Seconds: 0.1}
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Synthesizer: synth})
	without := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}})
	noKey := headers()
	noKey.Del("X-Engine-Key")
	cases := []struct {
		name   string
		h      *harness
		hdr    http.Header
		body   string
		status int
		code   string
		field  string
	}{
		{"4001 characters", h, headers(), ttsBody(strings.Repeat("a", 4001)), 400, engine.CodeInvalidRequest, "text"},
		{"no text", h, headers(), `{}`, 400, engine.CodeInvalidRequest, "text"},
		{"blank text", h, headers(), ttsBody(" \n "), 400, engine.CodeInvalidRequest, "text"},
		{"text of the wrong type", h, headers(), `{"text":5}`, 400, engine.CodeInvalidRequest, "text"},
		{"blank voice", h, headers(), ttsBody("hi", ""), 400, engine.CodeInvalidRequest, "voice"},
		{"unknown voice", h, headers(), ttsBody("hi", "nope"), 400, engine.CodeUnknownVoice, ""},
		{"body over 64 KiB", h, headers(), ttsBody(strings.Repeat("a", 70<<10)), 413, engine.CodePayloadTooLarge, ""},
		{"not JSON", h, headers(), `text=hi`, 400, engine.CodeInvalidRequest, ""},
		{"no engine key", h, noKey, ttsBody("hi"), 401, engine.CodeUnknownEngineKey, ""},
		{"no synthesizer", without, headers(), ttsBody("hi"), 503, engine.CodeSynthesizerUnavailable, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := tc.h.do(t.Context(), http.MethodPost, engine.PathTTS, tc.hdr, tc.body)
			p := readProblem(t, resp)
			if resp.StatusCode != tc.status || p.Code != tc.code || p.Field != tc.field {
				t.Errorf("got %d %s field %q (%s)", resp.StatusCode, p.Code, p.Field, p.Detail)
			}
		})
	}
	if p := readProblem(t, without.do(t.Context(), http.MethodPost, engine.PathTTS, headers(), ttsBody("hi"))); !p.Retryable {
		t.Error("503 synthesizer_unavailable is not retryable")
	}
}

func TestTTSClientGoneStopsSynthesis(t *testing.T) {
	checkLeaks(t)
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Synthesizer: newEspeak(t)})
	ctx, cancel := context.WithCancel(t.Context())
	resp := h.do(ctx, http.MethodPost, engine.PathTTS, headers(), ttsBody(strings.Repeat("This goes on and on. ", 150)))
	if _, err := io.ReadFull(resp.Body, make([]byte, 8192)); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	proc.NoChildren(t, "espeak-ng")
	h.srv.Close()
}

// slowReader sends a tts request over a raw connection with a small receive buffer, reads the
// response's first bytes and then nothing more, as an attacker holding a synthesis would.
func slowReader(t *testing.T, h *harness, text string) net.Conn {
	t.Helper()
	conn, status := unreadTTS(t, h, headers(), text)
	if status != "HTTP/1.1 200" {
		t.Fatalf("%q", status)
	}
	return conn
}

// unreadTTS sends a tts request with hdr as slowReader does, and returns the connection and
// the response's status line up to its code, such as "HTTP/1.1 200".
func unreadTTS(t *testing.T, h *harness, hdr http.Header, text string) (net.Conn, string) {
	t.Helper()
	conn, err := net.Dial("tcp", h.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.(*net.TCPConn).SetReadBuffer(4096)
	body := ttsBody(text)
	var req strings.Builder
	fmt.Fprintf(&req, "POST %s HTTP/1.1\r\nHost: engine\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", engine.PathTTS, len(body))
	for name, vals := range hdr {
		fmt.Fprintf(&req, "%s: %s\r\n", name, vals[0])
	}
	req.WriteString("\r\n" + body)
	if _, err := io.WriteString(conn, req.String()); err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 12)
	if _, err := io.ReadFull(conn, head); err != nil {
		t.Fatal(err)
	}
	return conn, string(head)
}

// TestTTSSynthesesPerUser: a user holds Config.MaxSynthesesPerUser syntheses at most (default
// 4): one user's readers that read nothing are refused 429 rate_limited past them, and
// another user's speech still finds a slot.
func TestTTSSynthesesPerUser(t *testing.T) {
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Synthesizer: &fakeSynthesizer{Rate: 16000, Endless: true},
		MaxConcurrentSyntheses: 6, WriteTimeout: time.Minute})
	statuses := map[string]int{}
	for range 8 {
		conn, status := unreadTTS(t, h, headers(), "hello")
		statuses[status]++
		if status == "HTTP/1.1 429" {
			resp, err := http.ReadResponse(bufio.NewReader(io.MultiReader(strings.NewReader(status), conn)), nil)
			if err != nil || resp.Header.Get("Retry-After") == "" {
				t.Errorf("429 without Retry-After: %v", err)
			}
		}
	}
	if statuses["HTTP/1.1 200"] != 4 || statuses["HTTP/1.1 429"] != 4 {
		t.Errorf("one user's 8 syntheses: %v", statuses)
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	resp := h.doStreaming(ctx, http.MethodPost, engine.PathTTS, userHeaders("another-user"), ttsBody("hello"))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("another user's synthesis: %d", resp.StatusCode)
	}
	if _, err := audio.ReadWAVHeader(resp.Body); err != nil {
		t.Fatal(err)
	}
}

// TestTTSBoundsSyntheses: past MaxConcurrentSyntheses a request is answered 503 overloaded at
// once and the observer counts it; a client that stops reading loses its synthesis after the
// write timeout, and its slot goes to the next request.
func TestTTSBoundsSyntheses(t *testing.T) {
	var overloads atomic.Int32
	obs := &engine.Observer{Overload: func(_ context.Context, e engine.OverloadEvent) {
		if e.Bound == engine.BoundSyntheses && e.Tenant == testKey {
			overloads.Add(1)
		}
	}}
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{}, Synthesizer: newEspeak(t),
		MaxConcurrentSyntheses: 1, WriteTimeout: 300 * time.Millisecond, Observer: obs})
	long := strings.Repeat("This goes on and on without a pause. ", 100)
	slow := slowReader(t, h, long)

	resp := h.do(t.Context(), http.MethodPost, engine.PathTTS, headers(), ttsBody("hello"))
	p := readProblem(t, resp)
	if resp.StatusCode != http.StatusServiceUnavailable || p.Code != engine.CodeOverloaded || resp.Header.Get("Retry-After") == "" || overloads.Load() != 1 {
		t.Fatalf("second synthesis: %d %s, Retry-After %q, %d overloads counted", resp.StatusCode, p.Code, resp.Header.Get("Retry-After"), overloads.Load())
	}

	// The slow reader is still connected and reads nothing: its synthesis ends by itself.
	proc.NoChildren(t, "espeak-ng")
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp := h.do(t.Context(), http.MethodPost, engine.PathTTS, headers(), ttsBody("hello"))
		wav, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			if _, err := audio.ReadWAVHeader(bytes.NewReader(wav)); err != nil || len(wav) < 1000 {
				t.Fatalf("after the slow reader: %v", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slow reader's slot was not freed: %d", resp.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(h.logs.String(), `"clientTooSlow":true`) {
		t.Errorf("the slow client is not logged as such:\n%s", h.logs.String())
	}
	slow.Close()
}

// TestTTSSaysMoneyAsWords: "$20.00" is said "twenty dollars", so that a listener (here, the
// engine's own recogniser, listening with the demo's grammar) hears the amount. Read as
// written, espeak-ng says "dollar twenty point zero zero".
func TestTTSSaysMoneyAsWords(t *testing.T) {
	heard := func(h *harness) string {
		resp := h.do(t.Context(), http.MethodPost, engine.PathTTS, demoHeaders(), ttsBody("Send $20.00 to Alex.", "en-us"))
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		hdr, err := audio.ReadWAVHeader(r)
		if err != nil {
			t.Fatal(err)
		}
		rest, _ := io.ReadAll(r)
		pcm := audio.Resample(audio.PCMFromBytes(rest), hdr.SampleRate, 16000)
		return h.turnWith(demoHeaders(), audioBody(pcm, 16000, nil)).spec.Meta.Transcript
	}
	if got := heard(newDemoHarness(t, engine.Config{})); got != "send twenty dollars to alex" {
		t.Errorf("heard %q", got)
	}
	asWritten := newDemoHarness(t, engine.Config{SpeechText: func(s, _ string) string { return s }})
	if got := heard(asWritten); got == "send twenty dollars to alex" {
		t.Errorf("read as written, the amount was heard too: the test does not tell the two apart")
	}
}
