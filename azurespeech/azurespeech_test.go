package azurespeech_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/azurespeech"
	"github.com/convengine/engine/azurespeech/azurespeechtest"
	"github.com/convengine/engine/internal/testkit"
)

const key = "az-test-key-0123456789abcdef"

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func options(srv *azurespeechtest.Server) *azurespeech.Options {
	return &azurespeech.Options{Key: key, Endpoint: srv.URL, Timeout: time.Second, ReadTimeout: 200 * time.Millisecond, MaxAudio: 5}
}

func TestTranscribe(t *testing.T) {
	srv := azurespeechtest.New(key)
	defer srv.Close()
	srv.Hear = func([]int16) string { return "What is my balance?" }
	for _, simple := range []bool{false, true} {
		o := options(srv)
		o.Simple, o.Tokens = simple, simple
		tr, err := azurespeech.NewTranscriber(o)
		if err != nil {
			t.Fatal(err)
		}
		// 8 kHz audio is sent resampled to the 16 kHz the API takes.
		text, err := tr.Transcribe(context.Background(), testkit.Voiced(8000), 8000, "de")
		if err != nil || text != "What is my balance?" {
			t.Errorf("simple %v: %q, %v", simple, text, err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Language != "de-DE" || reqs[0].Token || !reqs[1].Token {
		t.Errorf("requests %+v: want de-DE, by key then by token", reqs)
	}
}

// What Azure answers is the engine's outcome: no speech, speech not understood, an error.
func TestTranscribeStatuses(t *testing.T) {
	for status, want := range map[string]error{"InitialSilenceTimeout": nil, "NoMatch": engine.ErrNotUnderstood,
		"BabbleTimeout": engine.ErrNotUnderstood, "Error": azurespeech.ErrRecognition, "TooManyRequests": azurespeech.ErrRecognition} {
		srv := azurespeechtest.New(key)
		srv.RecognitionStatus = status
		tr, _ := azurespeech.NewTranscriber(options(srv))
		text, err := tr.Transcribe(context.Background(), testkit.Voiced(16000), 16000, "en-GB")
		if text != "" || !errors.Is(err, want) || (want == nil && err != nil) {
			t.Errorf("%s: %q, %v; want %v", status, text, err, want)
		}
		srv.Close()
	}
	tr, _ := azurespeech.NewTranscriber(&azurespeech.Options{Key: key, Region: "westeurope"})
	if _, err := tr.Transcribe(context.Background(), testkit.Voiced(16000), 16000, "tlh"); !errors.Is(err, engine.ErrUnsupportedLocale) {
		t.Errorf("a language Azure is not asked for: %v", err)
	}
	if _, err := tr.Transcribe(context.Background(), make([]int16, 61*16000), 16000, "en"); err == nil || !strings.Contains(err.Error(), "60") {
		t.Errorf("61 seconds: %v", err)
	}
}

func say(s *azurespeech.Synthesizer, text, voice string) (int, error) {
	a, err := s.Synthesize(context.Background(), text, voice)
	if err != nil {
		return 0, err
	}
	defer a.PCM.Close()
	b, err := io.ReadAll(a.PCM)
	return len(b), err
}

func TestSynthesize(t *testing.T) {
	srv := azurespeechtest.New(key)
	defer srv.Close()
	srv.Voices = []string{azurespeech.DefaultVoice, "de-DE-KatjaNeural"}
	o := options(srv)
	o.MaxCharacters = 40
	s, err := azurespeech.NewSynthesizer(o)
	if err != nil {
		t.Fatal(err)
	}
	text := "Ihr Kontostand beträgt 1 234 Euro. Sonst noch etwas <heute>?"
	n, err := say(s, text, "de-DE-KatjaNeural")
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	said := 0
	for _, r := range reqs {
		said += len([]rune(r.Text))
		if r.Voice != "de-DE-KatjaNeural" || r.Locale != "de-DE" {
			t.Errorf("asked %+v", r)
		}
	}
	if len(reqs) != 2 || reqs[1].Text != "Sonst noch etwas <heute>?" || n != len(azurespeechtest.Tone(said)) {
		t.Errorf("%d bytes for %+v", n, reqs)
	}
	for _, v := range []string{"nobody", "de-DE-Katja Neural", "../x"} {
		if _, err := say(s, "Hallo.", v); !errors.Is(err, engine.ErrUnknownVoice) {
			t.Errorf("voice %q: %v, want ErrUnknownVoice", v, err)
		}
	}
}

// Azure's faults end as errors that say what happened, never with the key: a wrong key, a
// rate limit, a failure, a stall, and an answer longer than its bound.
func TestFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  azurespeechtest.Fault
		status int
		want   string
	}{
		{"wrong key", azurespeechtest.None, 0, "401 Unauthorized"},
		{"rate limited", azurespeechtest.Status, 429, "429 Too Many Requests"},
		{"failing", azurespeechtest.Status, 502, "502 Bad Gateway"},
		{"stalled", azurespeechtest.Stall, 0, "no answer within"},
		{"too long", azurespeechtest.Long, 0, "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := azurespeechtest.New(key)
			defer srv.Close()
			srv.Fault, srv.Status = tc.fault, tc.status
			if tc.name == "wrong key" {
				srv.Key = "another"
			}
			tr, _ := azurespeech.NewTranscriber(options(srv))
			_, err := tr.Transcribe(context.Background(), testkit.Voiced(16000), 16000, "en")
			s, _ := azurespeech.NewSynthesizer(options(srv))
			_, serr := say(s, "Hello there.", "")
			for what, err := range map[string]error{"recognition": err, "synthesis": serr} {
				want := tc.want
				if tc.name == "stalled" && what == "synthesis" {
					want = "no answer within"
				}
				if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), key) {
					t.Errorf("%s: %v, want an error saying %q without the key", what, err, want)
				}
			}
		})
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []*azurespeech.Options{nil, {Key: key}, {Key: key, Region: "West Europe"},
		{Key: key, Endpoint: "https://westeurope.stt.speech.microsoft.com/speech"}, {Key: key, Region: "westeurope", Voice: "Katja"}} {
		if _, err := azurespeech.NewTranscriber(o); err == nil {
			t.Errorf("%+v was taken", o)
		}
	}
	_ = http.StatusOK
}

func TestInRegion(t *testing.T) {
	for _, tc := range []struct {
		region, data string
		in           bool
	}{
		{"westeurope", "eu", true}, {"germanywestcentral", "EU", true}, {"westeurope", "westeurope", true},
		{"eastus", "eu", false}, {"uksouth", "eu", false}, {"switzerlandnorth", "eu", false}, {"mars1", "eu", false}, {"", "", false},
	} {
		if got := azurespeech.InRegion(tc.region, tc.data); got != tc.in {
			t.Errorf("InRegion(%q, %q) = %v", tc.region, tc.data, got)
		}
	}
}
