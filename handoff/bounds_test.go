package handoff_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/handoff"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// A queue no one answers times out: the customer is told, the centre too, and the assistant
// takes back.
func TestQueueTimeout(t *testing.T) {
	c := newCentre(t)
	clk := &clock{t: time.Now()}
	s := webhookSetup(c)
	s.handoff = strings.Replace(s.handoff, "{", `{"queue_timeout":"2m",`, 1)
	s.now = clk.now
	r := newReplica(t, s)
	conv := newConv()
	id := handoffOf(r.say(t, "dan", conv, "I want to talk to a person"))
	c.next(t) // requested
	st := r.open(t, "dan", id)
	st.next(t) // queued
	clk.add(time.Minute)
	r.sb.Sweep(context.Background())
	clk.add(90 * time.Second)
	r.sb.Sweep(context.Background())
	if name, ev := st.next(t); name != "handoff" || ev["status"] != "failed" {
		t.Fatalf("after the queue's time: %s %v", name, ev)
	}
	if ev := c.next(t); ev["type"] != "handoff.ended" || ev["reason"] != "timeout" {
		t.Fatalf("the centre got %v", ev)
	}
	if back := r.say(t, "dan", conv, "what's my balance"); !strings.Contains(back.Spec.Speak, "balance") {
		t.Fatalf("the assistant said %q", back.Spec.Speak)
	}
}

// Outside office hours the assistant says when people are there, and no handoff starts.
func TestOfficeHours(t *testing.T) {
	c := newCentre(t)
	s := webhookSetup(c)
	now := time.Date(2026, 3, 7, 22, 0, 0, 0, time.UTC) // a Saturday night
	s.now = func() time.Time { return now }
	s.handoff = strings.Replace(s.handoff, "{", `{"hours":{"zone":"UTC","days":["mon","tue","wed","thu","fri"],"open":"09:00","close":"17:00"},`, 1)
	r := newReplica(t, s)
	done := r.say(t, "erin", newConv(), "can I speak to a human")
	if handoffOf(done) != "" || !strings.Contains(done.Spec.Speak, "09:00") {
		t.Fatalf("out of hours: %q %v", done.Spec.Speak, done.Spec.Widgets)
	}
}

// A user who opens handoffs in a loop is bounded; a tenant without handoff says so politely,
// in the user's language.
func TestBounds(t *testing.T) {
	c := newCentre(t)
	s := webhookSetup(c)
	s.handoff = strings.Replace(s.handoff, "{", `{"per_user":2,`, 1)
	r := newReplica(t, s)
	for i := range 2 {
		conv := newConv()
		id := handoffOf(r.say(t, "frank", conv, "I want to talk to a person"))
		if id == "" {
			t.Fatalf("handoff %d did not start", i+1)
		}
		if err := r.sb.End(context.Background(), id); err != nil {
			t.Fatal(err)
		}
	}
	if done := r.say(t, "frank", newConv(), "I want to talk to a person"); handoffOf(done) != "" || !strings.Contains(done.Spec.Speak, "several times") {
		t.Fatalf("a third handoff in the hour: %q", done.Spec.Speak)
	}

	plain := newReplica(t, &setup{})
	for text, want := range map[string]string{
		"I want to talk to a person":    "can't put you through",
		"quiero hablar con una persona": "no puedo pasarte",
	} {
		var done *engine.Event
		for ev, err := range plain.demo.Engine.Turn(context.Background(), caller("gina"), &engine.TurnInput{Transcript: text, Locale: map[bool]string{true: "es", false: "en"}[strings.HasPrefix(text, "quiero")]}) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type == engine.EventDone {
				done = &ev
			}
		}
		if !strings.Contains(done.Spec.Speak, want) {
			t.Errorf("%q without handoff: %q", text, done.Spec.Speak)
		}
	}
}

// The same question twice hands over, with the reason for the person.
func TestRepeatedQuestion(t *testing.T) {
	c := newCentre(t)
	r := newReplica(t, webhookSetup(c))
	conv := newConv()
	r.say(t, "hana", conv, "why was my mortgage rate changed")
	done := r.say(t, "hana", conv, "Why was my mortgage rate changed?")
	if handoffOf(done) == "" {
		t.Fatalf("the same question twice: %q", done.Spec.Speak)
	}
	if ev := c.next(t); !strings.Contains(ev["reason"].(string), "same thing") {
		t.Fatalf("the reason: %v", ev["reason"])
	}
}

// A question the assistant answered (with a tool) asked again is answered again: a customer
// who checks their balance twice is not handed over.
func TestRepeatedQuestionAnswered(t *testing.T) {
	c := newCentre(t)
	r := newReplica(t, webhookSetup(c))
	conv := newConv()
	for range 3 {
		if done := r.say(t, "hana", conv, "what is my balance"); handoffOf(done) != "" || !strings.Contains(done.Spec.Speak, "$") {
			t.Fatalf("the balance asked again: %q, widgets %v", done.Spec.Speak, done.Spec.Widgets)
		}
	}
}

// A handoff started on one replica is relayed by another sharing the store: the centre
// answers the second, the customer follows on the second, and writes through the first.
func TestReplicas(t *testing.T) {
	c := newCentre(t)
	store, replay := &handoff.MemoryStore{}, &engine.MemoryStore{}
	s := webhookSetup(c)
	s.store, s.replay = store, replay
	a := newReplica(t, s)
	b := newReplica(t, s)
	conv := newConv()
	id := handoffOf(a.say(t, "ivan", conv, "I want to talk to a person"))
	c.next(t)
	st := b.open(t, "ivan", id)
	st.next(t)
	if got := b.answer(t, `{"type":"agent.message","id":"`+id+`","text":"Hi, Ivan"}`, nil); got != 204 {
		t.Fatalf("answer on b: %d", got)
	}
	if name, ev := st.next(t); name != "handoff" && name != "message" || name == "message" && ev["speak"] != "Hi, Ivan" {
		t.Fatalf("on b: %s %v", name, ev)
	}
	if got := a.write(t, "ivan", id, "hello from a"); got != 202 {
		t.Fatalf("write on a: %d", got)
	}
	if ev := c.next(t); ev["text"] != "hello from a" {
		t.Fatalf("centre got %v", ev)
	}
	// A signature taken on one replica is refused on the other.
	body := `{"type":"agent.message","id":"` + id + `","text":"once"}`
	sig := handoff.Sign(secret, time.Now(), []byte(body))
	if got := a.answer(t, body, func([]byte) string { return sig }); got != 204 {
		t.Fatalf("on a: %d", got)
	}
	if got := b.answer(t, body, func([]byte) string { return sig }); got != 401 {
		t.Fatalf("replayed on b: %d", got)
	}
}
