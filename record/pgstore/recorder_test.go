package pgstore_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/record"
	"github.com/convengine/engine/widgets"
)

// recordKey is a signing key for the tests' recorders.
var recordKey = bytes.Repeat([]byte("k"), 32)

// turnOf is a turn of conversation conv as the engine records it: 40 spoken words and two
// widgets, as BenchmarkTurn answers, after one data tool call.
func turnOf(conv, turn string) *engine.RecordedTurn {
	return &engine.RecordedTurn{
		RecordKey: engine.RecordKey{Time: time.Now(), RequestID: "req-" + turn, Tenant: "pk_bank", Environment: "production",
			User: "user-" + conv, SessionID: "sess-" + conv, ConversationID: conv, TurnID: turn},
		Mode: engine.Mode("text"), Locale: "en-US", Input: "what is my balance",
		Tools: []engine.ToolRecord{{ID: "c1", Name: "get_balance", Arguments: `{"account":"checking"}`, Result: `{"balance":"1234.56","currency":"USD"}`}},
		Spec: widgets.Spec{Speak: strings.Repeat("word ", 40),
			Widgets: []widgets.Widget{widgets.Stat{Label: "Checking", Value: "$1,234.56"}, widgets.Progress{Label: "Goal", Value: 0.5}},
			Meta:    widgets.Meta{ConversationID: conv, TurnID: turn, Locale: "en-US"}},
	}
}

// actionOf is a confirmed transfer's evidence, with a DPoP proof.
func actionOf(conv, turn string) *engine.RecordedAction {
	t := turnOf(conv, turn)
	return &engine.RecordedAction{RecordKey: t.RecordKey, Tool: "transfer",
		Arguments:   json.RawMessage(`{"amount":"25.00","from":"checking","to":"savings"}`),
		Confirm:     widgets.Confirm{Title: "Move $25.00 to savings?", Body: "From checking to savings, today."},
		TokenID:     "tok-" + turn,
		TokenSHA256: strings.Repeat("ab", 32),
		Claims:      json.RawMessage(`{"tool":"transfer","exp":1900000000,"sub":"user-` + conv + `"}`),
		Method:      "dpop", VerifiedAt: json.RawMessage(`"2026-01-01T00:00:00Z"`),
		Proof: &engine.ActionProof{Type: "dpop", Proof: "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2In0." + strings.Repeat("x", 300) + "." + strings.Repeat("s", 86)}}
}

// newRecorder is a Recorder over s that writes its batches and checkpoints often.
func newRecorder(t testing.TB, s record.Store) *record.Recorder {
	t.Helper()
	r, err := record.New(s, &record.Options{Key: recordKey, BatchEvery: 20 * time.Millisecond,
		CheckpointEvery: 250 * time.Millisecond, ActionTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// stored is what a store holds, checked: every chain linked from seq 1, every entry's hash
// recomputed from its header and its sealed contents' hashes; the turn ids of each kind's
// entries, counted.
type stored struct {
	byKind  map[record.Kind]map[string]int
	chains  int
	covered bool // every chain's head is covered by a checkpoint
}

func check(t *testing.T, s record.Store) stored {
	t.Helper()
	ctx := context.Background()
	z := stored{byKind: map[record.Kind]map[string]int{}, covered: true}
	q := record.ChainQuery{Limit: 100}
	for {
		cs, err := s.Chains(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) == 0 {
			// And as an auditor checks it: the chains, the checkpoints and their leaves.
			pub, err := record.PublicKey(recordKey)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := record.Verify(ctx, s, []ed25519.PublicKey{pub})
			if err != nil || !rep.OK() {
				t.Fatalf("Verify: %v %v", err, rep.Err())
			}
			return z
		}
		for _, c := range cs {
			z.chains++
			z.covered = z.covered && c.CoveredSeq == c.Head.Seq
			prev, seq := make([]byte, record.HashSize), int64(0)
			for {
				es, err := s.Entries(ctx, c.ID, seq, 500)
				if err != nil {
					t.Fatal(err)
				}
				if len(es) == 0 {
					break
				}
				for _, e := range es {
					h := record.HeaderOf(&e)
					ok := e.Seq == seq+1 && bytes.Equal(e.Prev, prev) && bytes.Equal(h.Hash(), e.Hash) &&
						sealed(e.Personal, e.PersonalHash) && sealed(e.Evidence, e.EvidenceHash)
					if !ok {
						t.Fatalf("conversation %s: the entry at seq %d (after %d) is not intact", c.Conversation, e.Seq, seq)
					}
					if z.byKind[e.Kind] == nil {
						z.byKind[e.Kind] = map[string]int{}
					}
					z.byKind[e.Kind][e.Turn]++
					prev, seq = e.Hash, e.Seq
				}
			}
			if seq != c.Head.Seq || !bytes.Equal(prev, c.Head.Hash) {
				t.Fatalf("conversation %s: its head is seq %d, its last entry %d", c.Conversation, c.Head.Seq, seq)
			}
		}
		last := cs[len(cs)-1]
		q.AfterAt, q.AfterID = last.FirstAt, last.ID
	}
}

func sealed(content, hash []byte) bool {
	if content == nil {
		return true
	}
	h := sha256.Sum256(content)
	return bytes.Equal(h[:], hash)
}

// TestRecorder records turns and actions of a few conversations through a Recorder over
// PostgreSQL: every one is stored once, in intact chains, covered by the final checkpoint.
func TestRecorder(t *testing.T) {
	s := open(t, database(t))
	r := newRecorder(t, s)
	ctx := context.Background()
	for i := range 30 {
		conv := fmt.Sprintf("conv-%d", i%3)
		r.Turn(ctx, turnOf(conv, fmt.Sprintf("turn-%d", i)))
		if i%5 == 4 {
			outcome, err := r.Action(ctx, actionOf(conv, fmt.Sprintf("action-%d", i)))
			if err != nil {
				t.Fatal(err)
			}
			outcome(ctx, &engine.ActionOutcome{Time: time.Now(), Outcome: "ok", Result: `{"id":"tr-1"}`})
		}
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	z := check(t, s)
	if z.chains != 3 || len(z.byKind[record.KindTurn]) != 30 || len(z.byKind[record.KindAction]) != 6 ||
		len(z.byKind[record.KindOutcome]) != 6 || !z.covered {
		t.Fatalf("stored %d chains, %d turns, %d actions, %d outcomes, covered %v; want 3, 30, 6, 6, true",
			z.chains, len(z.byKind[record.KindTurn]), len(z.byKind[record.KindAction]), len(z.byKind[record.KindOutcome]), z.covered)
	}
}
