package openai_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/openai"
)

// tone returns n samples of a square wave.
func tone(n int) []byte {
	b := make([]byte, 2*n)
	for i := range n {
		v := int16(8000)
		if i/20%2 == 0 {
			v = -8000
		}
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	}
	return b
}

// streamedWAVHeader is a WAV header as streamed by the speech endpoint: its sizes are
// placeholders, and an extra chunk comes before the samples.
func streamedWAVHeader(rate int) []byte {
	var b bytes.Buffer
	b.WriteString("RIFF\xff\xff\xff\xffWAVE")
	b.WriteString("fmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(rate), uint32(rate * 2), uint16(2), uint16(16)} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("LIST\x04\x00\x00\x00INFO")
	b.WriteString("data\xff\xff\xff\xff")
	return b.Bytes()
}

func TestSynthesizerStreamsSpeech(t *testing.T) {
	pcm := tone(4800)
	for _, format := range []string{openai.FormatPCM, openai.FormatWAV} {
		t.Run(format, func(t *testing.T) {
			release := make(chan struct{})
			var seen struct {
				Model, Input, Voice string
				Format              string `json:"response_format"`
			}
			var auth string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				auth = r.Header.Get("Authorization")
				if r.URL.Path != "/v1/audio/speech" || json.NewDecoder(r.Body).Decode(&seen) != nil {
					http.Error(w, "bad request", http.StatusBadRequest)
					return
				}
				w.Header().Set("Content-Type", "audio/"+format)
				if format == openai.FormatWAV {
					w.Write(streamedWAVHeader(24000))
				}
				w.Write(pcm[:1000])
				w.(http.Flusher).Flush()
				<-release // the rest comes once the client has read the start
				w.Write(pcm[1000:])
			}))
			defer srv.Close()
			defer close(release)
			y, err := openai.NewSynthesizer(&openai.Options{BaseURL: srv.URL + "/v1", APIKey: testKey, SpeechFormat: format, Voice: "coral"})
			if err != nil {
				t.Fatal(err)
			}
			speech, err := y.Synthesize(context.Background(), "Your balance is $1,234.56.", "")
			if err != nil {
				t.Fatal(err)
			}
			defer speech.PCM.Close()
			if speech.SampleRate != 24000 {
				t.Errorf("sample rate %d", speech.SampleRate)
			}
			start := make([]byte, 1000)
			if _, err := io.ReadFull(speech.PCM, start); err != nil || !bytes.Equal(start, pcm[:1000]) {
				t.Fatalf("the first samples did not stream: %v", err)
			}
			release <- struct{}{}
			rest, err := io.ReadAll(speech.PCM)
			if err != nil || !bytes.Equal(rest, pcm[1000:]) {
				t.Fatalf("read %d more bytes: %v", len(rest), err)
			}
			if seen.Model != openai.DefaultSpeechModel || seen.Input != "Your balance is $1,234.56." || seen.Voice != "coral" ||
				seen.Format != format || auth != "Bearer "+testKey {
				t.Errorf("request %+v, auth %q", seen, auth)
			}
		})
	}
}

func TestSynthesizerVoiceAndErrors(t *testing.T) {
	var hits atomic.Int32
	var voice string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b struct{ Voice string }
		json.NewDecoder(r.Body).Decode(&b)
		voice = b.Voice
		switch hits.Add(1) {
		case 1:
			w.Header().Set("Retry-After-Ms", "1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`))
		case 2:
			w.Write(tone(10))
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"message":"Invalid voice","type":"invalid_request_error","code":"invalid_value"}}`))
		}
	}))
	defer srv.Close()
	y, _ := openai.NewSynthesizer(&openai.Options{BaseURL: srv.URL + "/v1", RetryDelay: time.Millisecond})
	speech, err := y.Synthesize(context.Background(), "Hello.", "nova")
	if err != nil || voice != "nova" || hits.Load() != 2 {
		t.Fatalf("error %v, voice %q, %d requests", err, voice, hits.Load())
	}
	speech.PCM.Close()
	_, err = y.Synthesize(context.Background(), "Hello.", "")
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || voice != openai.DefaultVoice || hits.Load() != 3 {
		t.Fatalf("error %v, voice %q, %d requests", err, voice, hits.Load())
	}
	if _, err := y.Synthesize(context.Background(), "  ", ""); !errors.Is(err, openai.ErrNoText) {
		t.Fatalf("empty text: %v", err)
	}
}

func TestSynthesizerRejectsAnotherWAV(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("RIFF\x00\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x02\x00\x80\xbb\x00\x00\x00\xee\x02\x00\x04\x00\x10\x00data"))
	}))
	defer srv.Close()
	y, _ := openai.NewSynthesizer(&openai.Options{BaseURL: srv.URL, SpeechFormat: openai.FormatWAV})
	if _, err := y.Synthesize(context.Background(), "Hello.", ""); err == nil {
		t.Fatal("stereo audio was accepted")
	}
}

func TestTranscriberUploadsWAV(t *testing.T) {
	samples := make([]int16, 16000)
	for i := range samples {
		samples[i] = int16(i%200*100 - 10000)
	}
	var (
		model, lang, format string
		got                 []int16
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/audio/transcriptions" || r.ParseMultipartForm(1<<20) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		model, lang, format = r.FormValue("model"), r.FormValue("language"), r.FormValue("response_format")
		f, h, err := r.FormFile("file")
		if err != nil || h.Filename != "speech.wav" {
			http.Error(w, "no file", http.StatusBadRequest)
			return
		}
		data, _ := io.ReadAll(f)
		got, err = audio.DecodeWAV(data, 16000, 60)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"text":" ¿Cuál es mi saldo? ","usage":{"type":"duration","seconds":1}}`))
	}))
	defer srv.Close()
	x, err := openai.NewTranscriber(&openai.Options{BaseURL: srv.URL + "/v1", APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	text, err := x.Transcribe(context.Background(), samples, 16000, "es-MX")
	if err != nil || text != "¿Cuál es mi saldo?" {
		t.Fatalf("text %q, error %v", text, err)
	}
	if model != openai.DefaultTranscriptionModel || lang != "es" || format != "json" || len(got) != len(samples) || got[123] != samples[123] {
		t.Errorf("model %q, language %q, format %q, %d samples", model, lang, format, len(got))
	}
}

func TestTranscriberErrors(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":{"message":"overloaded","type":"server_error"}}`))
	}))
	defer srv.Close()
	x, _ := openai.NewTranscriber(&openai.Options{BaseURL: srv.URL, MaxRetries: 1, RetryDelay: time.Millisecond})
	_, err := x.Transcribe(context.Background(), make([]int16, 1600), 16000, "en")
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 || hits.Load() != 2 {
		t.Fatalf("error %v after %d requests", err, hits.Load())
	}
	if _, err := x.Transcribe(context.Background(), make([]int16, 10), 0, "en"); err == nil {
		t.Fatal("a zero sample rate was accepted")
	}
}
