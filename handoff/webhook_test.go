package handoff_test

import (
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine/handoff"
)

func webhookSetup(c *centre) *setup {
	return &setup{handoff: `{"webhook":"` + c.srv.URL + `","secret":"` + secret + `"}`}
}

// A customer gives a card number, asks for a person, talks with them through the webhook's
// contact centre, and is given back to the assistant, which answers the next question.
func TestWebhookEndToEnd(t *testing.T) {
	c := newCentre(t)
	r := newReplica(t, webhookSetup(c))
	conv := newConv()
	r.say(t, "alice", conv, "my card number is 4111 1111 1111 1111 and it was charged twice")
	done := r.say(t, "alice", conv, "I want to talk to a person")
	id := handoffOf(done)
	if id == "" || !strings.Contains(done.Spec.Speak, "person") {
		t.Fatalf("the turn asking for a person said %q with widgets %v", done.Spec.Speak, done.Spec.Widgets)
	}
	req := c.next(t)
	if req["type"] != "handoff.requested" || req["id"] != id || req["summary"] == "" {
		t.Fatalf("the centre got %v", req)
	}
	all := strings.Join([]string{req["summary"].(string), toJSON(req["transcript"])}, " ")
	if strings.Contains(strings.ReplaceAll(all, " ", ""), "4111111111111111") {
		t.Fatalf("the card number went to the centre: %s", all)
	}
	s := r.open(t, "alice", id)
	if name, ev := s.next(t); name != "handoff" || ev["status"] != "queued" {
		t.Fatalf("first stream event %s %v", name, ev)
	}
	if got := r.answer(t, `{"type":"agent.joined","id":"`+id+`","agent":{"name":"Ana"}}`, nil); got != 204 {
		t.Fatalf("agent.joined: %d", got)
	}
	if name, ev := s.next(t); name != "handoff" || ev["status"] != "connected" || ev["agent"] != "Ana" {
		t.Fatalf("after joined: %s %v", name, ev)
	}
	if got := r.answer(t, `{"type":"agent.message","id":"`+id+`","text":"Hello, I see the double charge."}`, nil); got != 204 {
		t.Fatalf("agent.message: %d", got)
	}
	name, ev := s.next(t)
	meta, _ := ev["meta"].(map[string]any)
	if name != "message" || ev["speak"] != "Hello, I see the double charge." || meta["from"] != "person" || meta["name"] != "Ana" {
		t.Fatalf("the person's message reached the customer as %s %v", name, ev)
	}
	// The customer writes on the stream's side, and through a turn: both reach the person.
	if got := r.write(t, "alice", id, "Thanks, it was on Monday"); got != 202 {
		t.Fatalf("customer's message: %d", got)
	}
	if m := c.next(t); m["type"] != "user.message" || m["text"] != "Thanks, it was on Monday" {
		t.Fatalf("the centre got %v", m)
	}
	relayed := r.say(t, "alice", conv, "also my IBAN is GB82 WEST 1234 5698 7654 32")
	if !strings.Contains(relayed.Spec.Speak, "Ana") {
		t.Fatalf("a turn during the handoff said %q", relayed.Spec.Speak)
	}
	if m := c.next(t); m["type"] != "user.message" || strings.Contains(m["text"].(string), "WEST") {
		t.Fatalf("the centre got %v", m)
	}
	// Another user cannot follow the stream nor write.
	if got := r.write(t, "mallory", id, "hi"); got != 404 {
		t.Fatalf("another user's message: %d", got)
	}
	if got := r.answer(t, `{"type":"handoff.released","id":"`+id+`","note":"Refund of the double charge opened."}`, nil); got != 204 {
		t.Fatalf("released: %d", got)
	}
	if name, ev := s.next(t); name != "handoff" || ev["status"] != "released" {
		t.Fatalf("after release: %s %v", name, ev)
	}
	if got := r.answer(t, `{"type":"agent.message","id":"`+id+`","text":"late"}`, nil); got != 409 {
		t.Fatalf("an answer after the end: %d, want 409", got)
	}
	back := r.say(t, "alice", conv, "what's my balance")
	if !strings.Contains(back.Spec.Speak, "balance") || handoffOf(back) != "" {
		t.Fatalf("after release the assistant said %q", back.Spec.Speak)
	}
}

func toJSON(v any) string {
	b, _ := jsonMarshal(v)
	return string(b)
}

// The centre's answers are refused unless signed with the tenant's secret, now, once.
func TestWebhookSignatures(t *testing.T) {
	c := newCentre(t)
	r := newReplica(t, webhookSetup(c))
	conv := newConv()
	id := handoffOf(r.say(t, "bob", conv, "let me talk to someone"))
	if id == "" {
		t.Fatal("no handoff")
	}
	c.next(t)
	body := `{"type":"agent.joined","id":"` + id + `","agent":{"name":"Ana"}}`
	for name, sign := range map[string]func([]byte) string{
		"wrong secret": func(b []byte) string { return handoff.Sign("another-secret-0123456789", time.Now(), b) },
		"stale":        func(b []byte) string { return handoff.Sign(secret, time.Now().Add(-6*time.Minute), b) },
		"future":       func(b []byte) string { return handoff.Sign(secret, time.Now().Add(6*time.Minute), b) },
		"none":         func([]byte) string { return "" },
		"garbage":      func([]byte) string { return "t=abc,v1=zz" },
		"other body":   func([]byte) string { return handoff.Sign(secret, time.Now(), []byte(`{}`)) },
	} {
		if got := r.answer(t, body, sign); got != 401 {
			t.Errorf("%s: %d, want 401", name, got)
		}
	}
	sig := handoff.Sign(secret, time.Now(), []byte(body))
	if got := r.answer(t, body, func([]byte) string { return sig }); got != 204 {
		t.Fatalf("signed: %d", got)
	}
	if got := r.answer(t, body, func([]byte) string { return sig }); got != 401 {
		t.Fatalf("replayed: %d, want 401", got)
	}
	if got := r.answer(t, `{"type":"agent.joined","id":"00000000-0000-0000-0000-000000000000","agent":{"name":"A"}}`, nil); got != 404 {
		t.Fatalf("unknown id: %d, want 404", got)
	}
	// The engine's own events are signed: the centre found no bad one.
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bad != 0 {
		t.Fatalf("%d events from the engine had bad signatures", c.bad)
	}
}

// A centre that stays down: the deliveries are retried, then the handoff fails, the customer
// is told, and the assistant answers the next turn.
func TestWebhookCentreDown(t *testing.T) {
	c := newCentre(t)
	c.status = 503
	r := newReplica(t, webhookSetup(c))
	conv := newConv()
	id := handoffOf(r.say(t, "carol", conv, "I want to talk to a person"))
	s := r.open(t, "carol", id)
	s.next(t) // queued
	if name, ev := s.next(t); name != "handoff" || ev["status"] != "failed" {
		t.Fatalf("a centre down: %s %v", name, ev)
	}
	if back := r.say(t, "carol", conv, "what's my balance"); !strings.Contains(back.Spec.Speak, "balance") {
		t.Fatalf("after the failure the assistant said %q", back.Spec.Speak)
	}
}
