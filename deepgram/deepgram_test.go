package deepgram_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/deepgram"
	"github.com/convengine/engine/deepgram/deepgramtest"
	"github.com/convengine/engine/internal/cloudspeech"
)

const key = "dg-test-key-0123456789"

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// speech is a second of a voiced sound at 16 kHz.
func speech() []int16 {
	pcm := make([]int16, 16000)
	for i := range pcm {
		pcm[i] = int16(4000 * math.Sin(2*math.Pi*140*float64(i)/16000))
	}
	return pcm
}

func newTranscriber(t *testing.T, srv *deepgramtest.Server) *deepgram.Transcriber {
	t.Helper()
	tr, err := deepgram.New(&deepgram.Options{APIKey: key, BaseURL: srv.URL, FinalTimeout: 200 * time.Millisecond, ReadTimeout: time.Second,
		Keyterms: func(*engine.Tenant) []string { return []string{"Alex Kim", "Everyday Checking"} }})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// listen streams a second of speech in 20 ms frames and finishes.
func listen(t *testing.T, tr *deepgram.Transcriber, waitInterim bool) (interim string, text string, err error) {
	t.Helper()
	l, err := tr.Listen(context.Background(), &engine.Tenant{Key: "pk"}, 16000, "en-US")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	pcm := speech()
	for i := 0; i < len(pcm); i += 320 {
		if err := l.Write(pcm[i : i+320]); err != nil {
			return "", "", err
		}
	}
	// Interim results come while the user speaks; a moment for the stand-in's.
	for i := 0; waitInterim && i < 100; i++ {
		if interim, _ = l.Heard(); interim != "" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	text, err = l.Finish(context.Background())
	return interim, text, err
}

func TestLive(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault deepgramtest.Fault
	}{{"in order", deepgramtest.None}, {"finals out of order", deepgramtest.OutOfOrder}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := deepgramtest.New(key)
			defer srv.Close()
			srv.Fault = tc.fault
			srv.Hear = func([]int16, int) string { return "send twenty dollars to Alex Kim" }
			interim, text, err := listen(t, newTranscriber(t, srv), true)
			if err != nil || text != "send twenty dollars to Alex Kim" || interim != text {
				t.Errorf("heard %q (interim %q), %v", text, interim, err)
			}
			q := srv.Queries()[0]
			for _, want := range []string{"encoding=linear16", "sample_rate=16000", "interim_results=true", "endpointing=300", "utterance_end_ms=1000", "keyterm=Alex+Kim", "language=en-US"} {
				if !strings.Contains(q, want) {
					t.Errorf("the live query %q lacks %s", q, want)
				}
			}
		})
	}
}

// Every fault of the live API fails Finish with ErrNoFinal (the engine then transcribes the
// recording), in bounded time, and no error holds the key.
func TestLiveFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  deepgramtest.Fault
		status int
		want   string
	}{
		{"closed mid-utterance", deepgramtest.CloseMidUtterance, 0, "closed with status 1011"},
		{"no final", deepgramtest.NoFinal, 0, "no final result within"},
		{"stalled", deepgramtest.Stall, 0, "no final result within"},
		{"rate limited", deepgramtest.Status, http.StatusTooManyRequests, "429"},
		{"failing", deepgramtest.Status, http.StatusBadGateway, "502"},
		{"wrong key", deepgramtest.None, http.StatusUnauthorized, "401"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := deepgramtest.New(key)
			defer srv.Close()
			srv.Fault, srv.Status = tc.fault, tc.status
			if tc.status == http.StatusUnauthorized {
				srv.Key = "another-key"
			}
			_, text, err := listen(t, newTranscriber(t, srv), false)
			if err == nil {
				t.Fatalf("heard %q, want an error", text)
			}
			if !errors.Is(err, deepgram.ErrNoFinal) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), key) {
				t.Errorf("error %q, want ErrNoFinal saying %q, without the key", err, tc.want)
			}
		})
	}
}

func TestPrerecorded(t *testing.T) {
	srv := deepgramtest.New(key)
	defer srv.Close()
	tr := newTranscriber(t, srv)
	text, err := tr.TranscribeFor(context.Background(), &engine.Tenant{Key: "pk"}, speech(), 16000, "en-US")
	if err != nil || text != "what is my balance" {
		t.Errorf("heard %q, %v", text, err)
	}
	if q := srv.Queries()[0]; !strings.Contains(q, "keyterm=Everyday+Checking") || !strings.Contains(q, "sample_rate=16000") {
		t.Errorf("query %q", q)
	}
	for _, status := range []int{http.StatusUnauthorized, http.StatusTooManyRequests, http.StatusInternalServerError} {
		srv.Fault, srv.Status = deepgramtest.Status, status
		_, err := tr.Transcribe(context.Background(), speech(), 16000, "en-US")
		var se *cloudspeech.StatusError
		if !errors.As(err, &se) || se.Status != status || strings.Contains(err.Error(), key) {
			t.Errorf("status %d: error %v", status, err)
		}
	}
	srv.Fault = deepgramtest.Stall
	short, _ := deepgram.New(&deepgram.Options{APIKey: key, BaseURL: srv.URL, Timeout: 100 * time.Millisecond})
	if _, err := short.Transcribe(context.Background(), speech(), 16000, "en-US"); err == nil || !strings.Contains(err.Error(), "no answer within") {
		t.Errorf("stalled: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	if _, err := deepgram.New(&deepgram.Options{APIKey: key, BaseURL: "https://api.deepgram.com/v1"}); err == nil {
		t.Error("a base URL with a path was taken")
	}
	if _, err := deepgram.New(nil); err == nil {
		t.Error("no key was taken")
	}
	tr, _ := deepgram.New(&deepgram.Options{APIKey: key})
	if _, err := tr.Listen(context.Background(), nil, 4000, "en-US"); err == nil {
		t.Error("audio at 4 kHz was taken")
	}
	if _, err := tr.Transcribe(context.Background(), speech(), 96000, "en-US"); err == nil {
		t.Error("audio at 96 kHz was taken")
	}
}
