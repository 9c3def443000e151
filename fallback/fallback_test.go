package fallback_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/breaker"
	"github.com/convengine/engine/fallback"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/openai"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The whole answer of text.http, and its first words, which stall_text says before it stalls.
const (
	answer = "Hello! How can I help you today?"
)

// member is a chain's model of an OpenAI-compatible server at url, with short time-outs.
func member(t *testing.T, name, url string) fallback.Named {
	t.Helper()
	m, err := openai.NewModel(&openai.Options{BaseURL: url, APIKey: "sk-test", RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return fallback.Named{Name: name, Model: m, FirstTokenTimeout: 300 * time.Millisecond, StallTimeout: 300 * time.Millisecond}
}

func chain(t *testing.T, set *breaker.Set, models ...fallback.Named) *fallback.Chain {
	t.Helper()
	c, err := fallback.New(&fallback.Options{Breakers: set}, models...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type result struct {
	text   string
	finish *engine.ModelEvent
	err    error
	late   bool // an event after the error or the finish
}

func collect(seq iter.Seq2[engine.ModelEvent, error]) result {
	var r result
	for ev, err := range seq {
		if r.err != nil || r.finish != nil {
			r.late = true
		}
		switch {
		case err != nil:
			r.err = err
		case ev.Kind == engine.EventText:
			r.text += ev.Text
		case ev.Kind == engine.EventFinish:
			r.finish = &ev
		}
	}
	return r
}

func request() *engine.ModelRequest {
	return &engine.ModelRequest{
		Tenant: &engine.Tenant{Key: "pk_test"}, System: "You are a bank's assistant.",
		Messages: []engine.Message{{Role: engine.RoleUser, Content: "Hi"}}, Mode: engine.ModeText, Locale: "en",
	}
}

// TestFailover: a primary that fails as real servers do, before it said anything, hands the
// completion to the secondary, which says the whole answer once; the primary is tried once
// (its own retries give way to the chain), and the finish counts the failed attempt.
func TestFailover(t *testing.T) {
	cases := []struct {
		name    string
		primary string // the fake's mode; "refused" for a port nothing listens on
	}{
		{"500 with OpenAI's error", "server_error"},
		{"503 with a proxy's page", "overloaded"},
		{"429 with retry-after", "rate_limited"},
		{"connection refused", "refused"},
		{"first token never comes", "hang"},
		{"stream stops before any text", "stall"},
		{"stream cut before any text", "cut_before_text"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			secondary := newFake(t, "text")
			var primary *fake
			url := refused(t)
			if tc.primary != "refused" {
				primary = newFake(t, tc.primary)
				url = primary.URL
			}
			c := chain(t, breaker.New(nil), member(t, "primary", url), member(t, "secondary", secondary.URL))
			r := collect(c.Stream(context.Background(), request()))
			if r.err != nil || r.late {
				t.Fatalf("error %v (late events %v)", r.err, r.late)
			}
			if r.text != answer {
				t.Errorf("text %q, want %q once", r.text, answer)
			}
			if r.finish == nil || r.finish.Model != "gpt-4o-mini-2024-07-18" || r.finish.Retries != 1 {
				t.Errorf("finish %+v, want the secondary's model and 1 failed attempt", r.finish)
			}
			if primary != nil && primary.hits.Load() != 1 {
				t.Errorf("the primary got %d requests, want 1: a chain's model is tried once", primary.hits.Load())
			}
			if secondary.hits.Load() != 1 {
				t.Errorf("the secondary got %d requests", secondary.hits.Load())
			}
		})
	}
}

// TestFailureAfterText: once text went out, a failure ends the completion as with one model:
// the text said stands, the error follows it, and the secondary is never asked (it would
// repeat what was said).
func TestFailureAfterText(t *testing.T) {
	cases := []struct{ name, primary, text string }{
		{"stream dies after text", "cut_midstream", "Your Everyday Checking balance"},
		{"server error in the stream after text", "error_midstream", "Your balance is"},
		{"stream stalls after text", "stall_text", "Hello! How"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			primary, secondary := newFake(t, tc.primary), newFake(t, "text")
			c := chain(t, breaker.New(nil), member(t, "primary", primary.URL), member(t, "secondary", secondary.URL))
			r := collect(c.Stream(context.Background(), request()))
			if r.err == nil || r.late || r.finish != nil {
				t.Fatalf("error %v, finish %+v, late %v: want the error last", r.err, r.finish, r.late)
			}
			if errors.Is(r.err, engine.ErrModelUnavailable) {
				t.Errorf("error %v: the model answered in part, it is a model_error", r.err)
			}
			if !strings.HasPrefix(r.text, tc.text) || strings.Contains(r.text, answer) {
				t.Errorf("text %q, want what the primary said before it failed, %q", r.text, tc.text)
			}
			if n := secondary.hits.Load(); n != 0 {
				t.Errorf("the secondary got %d requests after text went out", n)
			}
		})
	}
}

// TestRequestErrorsDoNotFailOver: a 401 is the configuration's fault, not the server's: the
// turn fails with it, and the secondary is not asked.
func TestRequestErrorsDoNotFailOver(t *testing.T) {
	primary, secondary := newFake(t, "invalid_key"), newFake(t, "text")
	c := chain(t, breaker.New(nil), member(t, "primary", primary.URL), member(t, "secondary", secondary.URL))
	r := collect(c.Stream(context.Background(), request()))
	var ae *openai.APIError
	if !errors.As(r.err, &ae) || ae.StatusCode != 401 || errors.Is(r.err, engine.ErrModelUnavailable) {
		t.Fatalf("error %v", r.err)
	}
	if secondary.hits.Load() != 0 {
		t.Error("the secondary was asked")
	}
}

// TestRetryAfterHoldsTheModelAcrossTurns: a 429 with retry-after: 30 moves this completion to
// the secondary at once, and keeps the primary out of the next ones instead of sleeping.
func TestRetryAfterHoldsTheModelAcrossTurns(t *testing.T) {
	primary, secondary := newFake(t, "busy_30s"), newFake(t, "text")
	set := breaker.New(nil)
	c := chain(t, set, member(t, "primary", primary.URL), member(t, "secondary", secondary.URL))
	for i := range 3 {
		if r := collect(c.Stream(context.Background(), request())); r.err != nil || r.text != answer {
			t.Fatalf("completion %d: %q, %v", i, r.text, r.err)
		}
	}
	if n := primary.hits.Load(); n != 1 {
		t.Errorf("the primary got %d requests in 30 s of Retry-After", n)
	}
	// With the secondary rate-limited too, the chain has nothing to answer with, and says how
	// long until it has.
	secondary.set("busy_30s")
	r := collect(c.Stream(context.Background(), request()))
	var u *fallback.UnavailableError
	if !errors.As(r.err, &u) || !errors.Is(r.err, engine.ErrModelUnavailable) {
		t.Fatalf("error %v, want model unavailable", r.err)
	}
	if u.RetryAfter < 20*time.Second || u.RetryAfter > 30*time.Second || len(u.Models) != 2 {
		t.Errorf("retry after %v, models %v", u.RetryAfter, u.Models)
	}
	if wait, ok := c.Available(); ok || wait < 20*time.Second {
		t.Errorf("available %v, wait %v", ok, wait)
	}
	if primary.hits.Load() != 1 {
		t.Error("the held primary was asked")
	}
}

// TestBreakerStopsCallingAndProbesAgain: a primary that keeps failing is called five times,
// then skipped; once its cool-down is over one completion probes it, and it answers again.
func TestBreakerStopsCallingAndProbesAgain(t *testing.T) {
	primary, secondary := newFake(t, "server_error"), newFake(t, "text")
	var changes []string
	set := breaker.New(&breaker.Options{CoolDown: 200 * time.Millisecond, OnChange: func(name string, _, to breaker.State) {
		changes = append(changes, name+" "+string(to))
	}})
	c := chain(t, set, member(t, "primary", primary.URL), member(t, "secondary", secondary.URL))
	for i := range 12 {
		if r := collect(c.Stream(context.Background(), request())); r.err != nil || r.text != answer {
			t.Fatalf("completion %d: %q, %v", i, r.text, r.err)
		}
	}
	if n := primary.hits.Load(); n != breaker.DefaultMaxFailures {
		t.Errorf("the failing primary got %d requests in 12 completions, want %d", n, breaker.DefaultMaxFailures)
	}
	if set.State("primary") != breaker.Open {
		t.Errorf("breaker %s", set.State("primary"))
	}

	primary.set("text")
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := collect(c.Stream(context.Background(), request()))
		if r.err != nil || r.text != answer {
			t.Fatalf("%q, %v", r.text, r.err)
		}
		if r.finish.Retries == 0 && primary.hits.Load() > breaker.DefaultMaxFailures {
			break // the probe answered
		}
		if time.Now().After(deadline) {
			t.Fatal("the primary was never probed again")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := strings.Join(changes, ", "); got != "primary open, primary half-open, primary closed" {
		t.Errorf("breaker changes: %s", got)
	}
}

// TestAllDown: when every model fails before answering, the error wraps ErrModelUnavailable
// and names each model.
func TestAllDown(t *testing.T) {
	a, b := newFake(t, "server_error"), newFake(t, "hang")
	c := chain(t, breaker.New(nil), member(t, "a", a.URL), member(t, "b", b.URL))
	r := collect(c.Stream(context.Background(), request()))
	var u *fallback.UnavailableError
	if !errors.As(r.err, &u) || !errors.Is(r.err, engine.ErrModelUnavailable) || r.text != "" {
		t.Fatalf("%q, %v", r.text, r.err)
	}
	if !errors.Is(r.err, fallback.ErrNoFirstToken) || !strings.Contains(r.err.Error(), "a: openai") {
		t.Errorf("error %v", r.err)
	}
	if strings.Contains(r.err.Error(), "Sorry about that") {
		t.Error("the error quotes the server's explanation")
	}
}

// TestDegradedLastResort: the offline intent model, last in the chain, still answers when the
// language models are down, and the Observer is told the answer is degraded.
func TestDegradedLastResort(t *testing.T) {
	a := newFake(t, "server_error")
	var events []engine.BreakerEvent
	obs := &engine.Observer{Breaker: func(_ context.Context, e engine.BreakerEvent) { events = append(events, e) }}
	c, err := fallback.New(&fallback.Options{Observer: obs}, member(t, "primary", a.URL),
		fallback.Named{Name: "intent", Model: intent.New(nil), Degraded: true})
	if err != nil {
		t.Fatal(err)
	}
	req := request()
	req.Tenant.Intents = []byte(`{"fallback": "help", "intents": [
	  {"name": "help", "responses": {"en": {"speak": "I can check your balance."}}}]}`)
	r := collect(c.Stream(context.Background(), req))
	if r.err != nil || r.text != "I can check your balance." || r.finish == nil || r.finish.Model != "intent" || r.finish.Retries != 1 {
		t.Fatalf("finish %+v, error %v", r.finish, r.err)
	}
	if len(events) != 1 || events[0] != (engine.BreakerEvent{Name: "intent", State: "degraded", Tenant: "pk_test"}) {
		t.Errorf("events %+v", events)
	}
}

func TestNewRefusesBrokenChains(t *testing.T) {
	m := intent.New(nil)
	for _, models := range [][]fallback.Named{
		nil,
		{{Name: "", Model: m}},
		{{Name: "a"}},
		{{Name: "a", Model: m}, {Name: "a", Model: m}},
		{{Name: "a", Model: m, StallTimeout: -1}},
	} {
		if _, err := fallback.New(nil, models...); !errors.Is(err, fallback.ErrOptions) {
			t.Errorf("%+v: %v", models, err)
		}
	}
}

// TestCancelStopsTheChain: a completion whose caller goes away ends without trying the next
// model, and blames nobody.
func TestCancelStopsTheChain(t *testing.T) {
	a, b := newFake(t, "hang"), newFake(t, "text")
	set := breaker.New(nil)
	ca := member(t, "a", a.URL)
	ca.FirstTokenTimeout = time.Minute
	c := chain(t, set, ca, member(t, "b", b.URL))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for a.hits.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	r := collect(c.Stream(ctx, request()))
	if !errors.Is(r.err, context.Canceled) || b.hits.Load() != 0 {
		t.Fatalf("error %v, b asked %d times", r.err, b.hits.Load())
	}
}
