package record_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/record"
	"github.com/convengine/engine/record/sqlitestore"
	"github.com/convengine/engine/widgets"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var testKey = []byte("0123456789abcdef0123456789abcdef-record-test-key")

// fixture is a recorder over a SQLite file.
type fixture struct {
	file  string
	store *sqlitestore.Store
	rec   *record.Recorder
	pub   []ed25519.PublicKey
}

func newFixture(t testing.TB, o *record.Options) *fixture {
	t.Helper()
	f := &fixture{file: filepath.Join(t.TempDir(), "record.db")}
	f.open(t, o)
	return f
}

func (f *fixture) open(t testing.TB, o *record.Options) {
	t.Helper()
	s, err := sqlitestore.Open(context.Background(), f.file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o == nil {
		o = &record.Options{}
	}
	if o.Key == nil {
		o.Key = testKey
	}
	r, err := record.New(s, o)
	if err != nil {
		t.Fatal(err)
	}
	f.store, f.rec = s, r
	pub, _ := record.PublicKey(o.Key)
	f.pub = []ed25519.PublicKey{pub}
	t.Cleanup(func() { f.close(t) })
}

func (f *fixture) close(t testing.TB) {
	if f.rec == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.rec.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	f.store.Close()
	f.rec = nil
}

func key(user, conv string, at time.Time) engine.RecordKey {
	return engine.RecordKey{Time: at, RequestID: "req-" + conv, Tenant: "bank", Environment: "live", User: user, SessionID: "sess-" + conv,
		ConversationID: conv, TurnID: fmt.Sprint("turn-", at.UnixNano())}
}

var t0 = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

func turn(user, conv string, at time.Time, said, told string) *engine.RecordedTurn {
	return &engine.RecordedTurn{RecordKey: key(user, conv, at), Mode: "text", Locale: "en", Input: said,
		Spec: widgets.Spec{Speak: told}}
}

func action(user, conv string, at time.Time) *engine.RecordedAction {
	return &engine.RecordedAction{RecordKey: key(user, conv, at), Tool: "transfer", Arguments: json.RawMessage(`{"amount":20,"to":"Alex"}`),
		Confirm: widgets.Confirm{Title: "Send 20 to Alex?"}, TokenID: "tok-1", TokenSHA256: strings.Repeat("ab", 32),
		Claims: json.RawMessage(`{"tool":"transfer"}`), Method: "biometric", VerifiedAt: json.RawMessage(`"2026-05-04T10:00:00Z"`),
		Proof: &engine.ActionProof{Type: engine.ProofTypeJWS, Proof: "eyJhbGciOiJFUzI1NiJ9.e30.c2ln", Token: "the-action-token-must-not-be-kept",
			Key: engine.DeviceKey{Kind: "device", PublicKey: json.RawMessage(`{"kty":"EC","crv":"P-256","x":"x","y":"y"}`), Thumbprint: "tp"}}}
}

// conversation records a conversation of turns, an approved action with its outcome and a
// declined one, and flushes it.
func (f *fixture) conversation(t testing.TB, user, conv string, turns int) {
	t.Helper()
	ctx := context.Background()
	for i := range turns {
		f.rec.Turn(ctx, turn(user, conv, t0.Add(time.Duration(i)*time.Second), fmt.Sprintf("%s says %d", user, i), fmt.Sprintf("answer %d", i)))
	}
	done, err := f.rec.Action(ctx, action(user, conv, t0.Add(time.Hour)))
	if err != nil {
		t.Fatalf("Action: %v", err)
	}
	done(ctx, &engine.ActionOutcome{Time: t0.Add(time.Hour + time.Second), Outcome: "ok", Result: `{"ok":true}`})
	done, err = f.rec.Action(ctx, action(user, conv, t0.Add(2*time.Hour)))
	if err != nil {
		t.Fatalf("Action: %v", err)
	}
	done(ctx, &engine.ActionOutcome{Time: t0.Add(2*time.Hour + time.Second), Outcome: "declined", Result: `{"error":"insufficient funds"}`})
	if err := f.rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) verify(t testing.TB) *record.Report {
	t.Helper()
	rep, err := record.Verify(context.Background(), f.store, f.pub)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return rep
}

func (f *fixture) export(t testing.TB, user string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f.rec.Export(context.Background(), &b, record.ExportQuery{Tenant: "bank", User: user}); err != nil {
		t.Fatalf("Export: %v", err)
	}
	return b.Bytes()
}

func (f *fixture) entries(t testing.TB, user, conv string) []record.Entry {
	t.Helper()
	es, err := f.store.Entries(context.Background(), record.ChainID("bank", "live", user, conv), 0, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func TestAConversationVerifiesAndExports(t *testing.T) {
	f := newFixture(t, nil)
	f.conversation(t, "ann", "c1", 3)
	f.conversation(t, "bob", "c2", 2)
	es := f.entries(t, "ann", "c1")
	kinds := ""
	for _, e := range es {
		kinds += string(e.Kind)[:1]
	}
	if kinds != "tttaoao" {
		t.Fatalf("the chain holds %q, want three turns, then action, outcome, action, outcome", kinds)
	}
	if rep := f.verify(t); !rep.OK() || rep.Entries != 13 || rep.Uncovered != 13 {
		t.Fatalf("Verify before a checkpoint: %+v", rep)
	}
	if _, err := f.rec.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep := f.verify(t)
	if !rep.OK() || rep.Uncovered != 0 || rep.Checkpoints != 1 || rep.Chains != 2 {
		t.Fatalf("Verify: %+v", rep)
	}
	exp := f.export(t, "ann")
	for _, leak := range []string{"the-action-token-must-not-be-kept", "bob says"} {
		if bytes.Contains(exp, []byte(leak)) {
			t.Fatalf("the export holds %q", leak)
		}
	}
	for _, want := range []string{"ann says 2", "answer 1", "Send 20 to Alex?", "eyJhbGciOiJFUzI1NiJ9.e30.c2ln", "insufficient funds", `"type":"proof"`} {
		if !bytes.Contains(exp, []byte(want)) {
			t.Fatalf("the export lacks %q:\n%s", want, exp)
		}
	}
	rep, err := record.VerifyExport(bytes.NewReader(exp), f.pub)
	if err != nil || !rep.OK() || rep.Entries != 7 || rep.Uncovered != 0 {
		t.Fatalf("VerifyExport: %+v %v", rep, err)
	}
	// Against another key, nothing verifies.
	other, _ := record.PublicKey(bytes.Repeat([]byte("k"), 32))
	if rep, _ := record.VerifyExport(bytes.NewReader(exp), []ed25519.PublicKey{other}); rep.OK() {
		t.Fatal("an export verified against another key")
	}
}
