package handoff_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/handoff"
	"github.com/convengine/engine/record"
	"github.com/convengine/engine/record/sqlitestore"
)

var recordKey = []byte("a record key of at least thirty-two bytes, for handoffs")

// A handoff's events and the messages of the person and of the customer are in the
// conversation's record, in the chain of its turns, with no card number; the export verifies.
func TestHandoffIsRecorded(t *testing.T) {
	ctx := context.Background()
	store, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "record.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rec, err := record.New(store, &record.Options{Key: recordKey})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close(ctx)
	r := newReplica(t, &setup{handoff: `{"desk":true}`, recorder: rec})
	conv := newConv()
	r.say(t, "alice", conv, "my card number is 4111 1111 1111 1111 and it was charged twice")
	id := handoffOf(r.say(t, "alice", conv, "I want to talk to a person"))
	if id == "" {
		t.Fatal("no handoff started")
	}
	for _, a := range []*handoff.Answer{{Type: handoff.AgentJoined, ID: id, Agent: "Ana"}, {Type: handoff.AgentMessage, ID: id, Text: "Hello, I see the double charge."}} {
		if err := r.sb.Answer(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.write(t, "alice", id, "It was on Monday, card 4111 1111 1111 1111"); got != 202 {
		t.Fatalf("the customer's message: %d", got)
	}
	if err := r.sb.Answer(ctx, &handoff.Answer{Type: handoff.Released, ID: id, Note: "Refund opened, ref 1234."}); err != nil {
		t.Fatal(err)
	}
	// A second handoff of another conversation, which the centre rejects.
	other := newConv()
	id2 := handoffOf(r.say(t, "alice", other, "I want to talk to a person"))
	if err := r.sb.Answer(ctx, &handoff.Answer{Type: handoff.Rejected, ID: id2, Reason: "no agents"}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}

	var exp bytes.Buffer
	user := r.demo.Engine.UserKey(caller("alice"))
	if err := rec.Export(ctx, &exp, record.ExportQuery{Tenant: demobank.EngineKey, User: user, Conversation: conv}); err != nil {
		t.Fatal(err)
	}
	pub, _ := record.PublicKey(recordKey)
	if rep, err := record.VerifyExport(bytes.NewReader(exp.Bytes()), []ed25519.PublicKey{pub}); err != nil || !rep.OK() {
		t.Fatalf("VerifyExport: %+v %v", rep, err)
	}
	if rep, err := record.Verify(ctx, store, []ed25519.PublicKey{pub}); err != nil || !rep.OK() {
		t.Fatalf("Verify: %+v %v", rep, err)
	}
	var kinds, events []string
	for _, line := range strings.Split(strings.TrimSpace(exp.String()), "\n") {
		var x struct {
			Type string `json:"type"`
			record.ExportedEntry
		}
		_ = json.Unmarshal([]byte(line), &x)
		if x.Type != "entry" {
			continue
		}
		kinds = append(kinds, string(x.Header.Kind))
		if x.Header.Kind == record.KindHandoff {
			var c record.HandoffContent
			if err := json.Unmarshal(x.Personal, &c); err != nil || c.Handoff != id {
				t.Fatalf("a handoff entry holds %s (%v)", x.Personal, err)
			}
			events = append(events, c.Event+":"+c.Person+":"+c.Text+c.Reason)
		}
	}
	// The request is recorded during the turn that asks, before that turn's own entry.
	if got := strings.Join(kinds, " "); got != "turn handoff turn handoff handoff handoff handoff" {
		t.Errorf("the chain holds %s", got)
	}
	want := []string{"requested:", "joined:Ana:", "person_message:Ana:Hello, I see the double charge.",
		"user_message::It was on Monday, card [CARD_1]", "released:Ana:Refund opened, ref 1234."}
	if len(events) != len(want) {
		t.Fatalf("the record's handoff events: %q", events)
	}
	for i, w := range want {
		if !strings.HasPrefix(events[i], w) {
			t.Errorf("event %d is %q, want %q…", i, events[i], w)
		}
	}
	if !strings.Contains(events[0], "the customer asked for a person") {
		t.Errorf("the request's reason is missing: %q", events[0])
	}
	if s := strings.ReplaceAll(exp.String(), " ", ""); strings.Contains(s, "4111111111111111") {
		t.Error("the record holds the card number")
	}

	exp.Reset()
	if err := rec.Export(ctx, &exp, record.ExportQuery{Tenant: demobank.EngineKey, User: user, Conversation: other}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(exp.String(), `"event":"rejected","handoff":"`+id2+`","reason":"no agents"`) {
		t.Errorf("the rejected handoff is not in its conversation's record:\n%s", exp.String())
	}
}
