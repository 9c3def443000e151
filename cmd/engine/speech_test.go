package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/espeak"
	"github.com/convengine/engine/flite"
	"github.com/convengine/engine/widgets"
)

func demoRequest(t *testing.T, method, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Engine-Key", "pk_demo")
	req.Header.Set("X-Token", "demo-user-token")
	req.Header.Set("X-Request-ID", "prod-speech-1")
	req.Header.Set("Content-Type", "application/json")
	return req
}

// TestDemoSpeaksAndListens runs the reference server with the installed espeak-ng and
// pocketsphinx: speech comes back from the tts endpoint, a spoken question is answered on the
// voice socket, and stopping the server closes the socket with 1012.
func TestDemoSpeaksAndListens(t *testing.T) {
	if testing.Short() {
		t.Skip("drives espeak-ng and pocketsphinx")
	}
	synth, err := espeak.New(nil)
	if err != nil {
		t.Fatalf("%v: install it with apt-get install espeak-ng", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	out := &lineWriter{re: regexp.MustCompile(`engine listening on (\S+)`), found: make(chan string, 1)}
	logs := &lineWriter{re: regexp.MustCompile(`^\b$`), found: make(chan string, 1)}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, debugEnv(withRecords(t, nil)), out, logs)
	}()
	var base string
	select {
	case base = <-out.found:
	case err := <-done:
		t.Fatalf("run: %v", err)
	}
	if _, err := flite.New(nil); err != nil {
		t.Fatalf("%v: install it with apt-get install flite", err)
	}
	for _, part := range []string{"speech synthesis: flite for English, espeak-ng for the other languages", "speech recognition: pocketsphinx"} {
		if !strings.Contains(logs.String(), part) {
			t.Errorf("the log does not say %q:\n%s", part, logs.String())
		}
	}

	resp, err := http.DefaultClient.Do(demoRequest(t, http.MethodPost, base+engine.PathTTS, `{"text":"Welcome to Demo Bank."}`))
	if err != nil {
		t.Fatal(err)
	}
	wav, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/wav" || len(wav) < 44+16000 {
		t.Fatalf("tts: %d %s, %d bytes", resp.StatusCode, resp.Header.Get("Content-Type"), len(wav))
	}
	// English is flite's (16 kHz), another language espeak-ng's (22.05 kHz).
	for body, rate := range map[string]int{`{"text":"Welcome to Demo Bank."}`: 16000, `{"text":"Bienvenido.","voice":"es"}`: 22050} {
		resp, err := http.DefaultClient.Do(demoRequest(t, http.MethodPost, base+engine.PathTTS, body))
		if err != nil {
			t.Fatal(err)
		}
		h, err := audio.ReadWAVHeader(resp.Body)
		resp.Body.Close()
		if err != nil || h.SampleRate != rate {
			t.Errorf("%s: %+v %v, want %d Hz", body, h, err, rate)
		}
	}

	hdr := demoRequest(t, http.MethodGet, base, "").Header
	ws, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(base, "http")+engine.PathStream, &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	a, err := synth.Synthesize(t.Context(), "What is my balance?", "en-us")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(a.PCM)
	a.PCM.Close()
	pcm := audio.AppendPCM(nil, audio.Resample(audio.PCMFromBytes(b), a.SampleRate, 16000))
	for i := 0; i < len(pcm); i += 640 {
		msg, _ := json.Marshal(map[string]string{"type": "audio", "chunk": base64.StdEncoding.EncodeToString(pcm[i:min(i+640, len(pcm))])})
		if err := ws.Write(t.Context(), websocket.MessageText, msg); err != nil {
			t.Fatal(err)
		}
	}
	ws.Write(t.Context(), websocket.MessageText, []byte(`{"type":"end_of_speech"}`))
	var (
		transcript string
		audioMsgs  int
		spec       widgets.Spec
	)
	for {
		_, data, err := ws.Read(t.Context())
		if err != nil {
			t.Fatalf("socket: %v", err)
		}
		var m struct {
			Type, Text string
			Spec       widgets.Spec
		}
		json.Unmarshal(data, &m)
		switch m.Type {
		case "transcript":
			transcript = m.Text
		case "audio":
			audioMsgs++
		case "spec":
			spec = m.Spec
		case "error":
			t.Fatalf("socket: %s", data)
		}
		if m.Type == "done" {
			break
		}
	}
	if transcript != "what is my balance" || audioMsgs == 0 || len(spec.Widgets) != 1 || spec.Widgets[0].WidgetType() != widgets.TypeStat {
		t.Errorf("heard %q, %d audio messages, widgets %+v", transcript, audioMsgs, spec.Widgets)
	}

	stop()
	_, _, err = ws.Read(t.Context())
	if code := websocket.CloseStatus(err); code != websocket.StatusServiceRestart {
		t.Errorf("on shutdown the socket ended with %v, want 1012", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Error("the server did not shut down")
	}
}

func TestSpeechOff(t *testing.T) {
	base, _ := startServer(t, []string{"-speech", "off"}, nil)
	resp, err := http.DefaultClient.Do(demoRequest(t, http.MethodPost, base+engine.PathTTS, `{"text":"hello"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p engine.Problem
	json.NewDecoder(resp.Body).Decode(&p)
	if resp.StatusCode != 503 || p.Code != engine.CodeSynthesizerUnavailable || p.Detail == "" {
		t.Errorf("tts with speech off: %d %+v", resp.StatusCode, p)
	}
	err = run(t.Context(), []string{"-speech", "loud"}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-speech") {
		t.Errorf("-speech loud: %v", err)
	}
}
