package elevenlabs_test

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
	"github.com/convengine/engine/elevenlabs"
	"github.com/convengine/engine/elevenlabs/elevenlabstest"
	"github.com/convengine/engine/internal/cloudspeech"
)

const key = "xi-test-key-0123456789"

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newSynth(t *testing.T, srv *elevenlabstest.Server, limit int) *elevenlabs.Synthesizer {
	t.Helper()
	s, err := elevenlabs.New(&elevenlabs.Options{APIKey: key, BaseURL: srv.URL, MaxCharacters: limit, ReadTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func say(s *elevenlabs.Synthesizer, text, voice string) (int, error) {
	a, err := s.Synthesize(context.Background(), text, voice)
	if err != nil {
		return 0, err
	}
	defer a.PCM.Close()
	b, err := io.ReadAll(a.PCM)
	if a.SampleRate != 16000 {
		return 0, errors.New("not 16 kHz")
	}
	return len(b), err
}

func TestSynthesize(t *testing.T) {
	srv := elevenlabstest.New(key)
	defer srv.Close()
	srv.Voices = []string{elevenlabs.DefaultVoice, "21m00Tcm4TlvDq8ikWAM"}
	s := newSynth(t, srv, 0)
	n, err := say(s, "Your balance is fine.", "")
	if err != nil || n != len(elevenlabstest.Tone(21)) {
		t.Errorf("%d bytes, %v", n, err)
	}
	if _, err := say(s, "Hello.", "21m00Tcm4TlvDq8ikWAM"); err != nil {
		t.Error(err)
	}
	for _, v := range []string{"nobody0000", "../../v1/user", "a b"} {
		if _, err := say(s, "Hello.", v); !errors.Is(err, engine.ErrUnknownVoice) {
			t.Errorf("voice %q: %v, want ErrUnknownVoice", v, err)
		}
	}
}

// A line longer than the model takes is spoken whole, in pieces cut at sentence ends.
func TestSynthesizeLongText(t *testing.T) {
	srv := elevenlabstest.New(key)
	defer srv.Close()
	srv.MaxCharacters = 40
	text := "Your balance is $1,234.56 today. You spent $120 on groceries. Your savings goal is near."
	n, err := say(newSynth(t, srv, 40), text, "")
	if err != nil {
		t.Fatal(err)
	}
	texts := srv.Texts()
	if len(texts) != 3 || texts[0] != "Your balance is $1,234.56 today." || strings.Join(texts, " ") != text {
		t.Errorf("asked for %q", texts)
	}
	if want := len(elevenlabstest.Tone(len(strings.Join(texts, "")))); n != want {
		t.Errorf("%d bytes, want %d", n, want)
	}
}

// ElevenLabs' faults, over HTTP and on the input stream, end as errors that name the
// provider's reason and never the key; a stream that cannot open speaks over HTTP.
func TestSynthesizeFaults(t *testing.T) {
	for _, tc := range []struct {
		name         string
		fault        elevenlabstest.Fault
		status       int
		want, stream string // what the error says over HTTP, and on the input stream
	}{
		{"wrong key", elevenlabstest.None, 0, "401 Unauthorized (invalid_api_key)", "invalid_api_key"},
		{"rate limited", elevenlabstest.Status, 429, "429 Too Many Requests (too_many_concurrent_requests)", "429 Too Many Requests"},
		{"failing", elevenlabstest.Status, 503, "503", "503"},
		{"stalled", elevenlabstest.Stall, 0, cloudspeech.ErrStalled.Error(), cloudspeech.ErrStalled.Error()},
		{"cut off", elevenlabstest.CutOff, 0, "unexpected EOF", "closed with status 1011"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := elevenlabstest.New(key)
			defer srv.Close()
			srv.Fault, srv.Status = tc.fault, tc.status
			if tc.name == "wrong key" {
				srv.Key = "another"
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := newSynth(t, srv, 0)
			_, err := say(s, "Hello there.", "")
			_, serr := readAll(ctx, s.Stream(ctx, ""), "Hello there.")
			for i, err := range []error{err, serr} {
				want := []string{tc.want, tc.stream}[i]
				if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), key) {
					t.Errorf("error %v, want one saying %q without the key", err, want)
				}
			}
		})
	}
}

func TestNew(t *testing.T) {
	for _, o := range []*elevenlabs.Options{nil, {APIKey: key, BaseURL: "https://api.elevenlabs.io/v1"}, {APIKey: key, Voice: "x/y"}} {
		if _, err := elevenlabs.New(o); err == nil {
			t.Errorf("%+v was taken", o)
		}
	}
	_ = http.StatusOK
}
