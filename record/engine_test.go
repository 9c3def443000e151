package record_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/pii"
	"github.com/convengine/engine/record"
	"github.com/convengine/engine/widgets"
)

const (
	engineKey = "bank-key"
	userToken = "user-token-of-ann"
	card      = "4111 1111 1111 1111"
	iban      = "GB82 WEST 1234 5698 7654 32"
)

var signingKey = []byte("an engine signing key of at least thirty-two bytes")

func bankTenant() *engine.Tenant {
	return &engine.Tenant{Key: engineKey, Name: "Test Bank",
		Environments: map[string]*engine.Environment{engine.EnvProduction: {BackendURL: "http://127.0.0.1:1"}},
		Actions: map[string]*engine.Action{"transfer": {Confirm: map[string]engine.ConfirmCopy{
			"en": {Title: "Send money", Body: "Send ${amount|money} to {to}?", ConfirmLabel: "Send", CancelLabel: "Cancel"},
		}}},
		Records: json.RawMessage(`{"retention_days": 1825}`),
	}
}

// bankModel answers a transfer request with the transfer action, and anything else by
// repeating what it was told (as the model saw it: the privacy policy's placeholders).
func bankModel() engine.Model {
	return enginetest.ModelFunc(func(_ context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		last := req.Messages[len(req.Messages)-1]
		if last.Role != engine.RoleUser {
			return enginetest.Text("Done.")
		}
		switch {
		case strings.Contains(last.Content, "Bob"):
			return []engine.ModelEvent{engine.TextEvent("Please confirm."), enginetest.ToolCall("t2", "transfer", `{"amount":5000,"to":"Bob"}`)}
		case strings.Contains(last.Content, "send"):
			return []engine.ModelEvent{engine.TextEvent("Please confirm."), enginetest.ToolCall("t1", "transfer", `{"amount":20,"to":"Alex"}`)}
		}
		return enginetest.Text("You said: " + last.Content)
	})
}

func bankTools() *enginetest.FuncToolset {
	return &enginetest.FuncToolset{
		ToolList: []engine.Tool{{Name: "transfer", Action: true, Parameters: json.RawMessage(`{"type":"object"}`)}},
		Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
			"transfer": func(_ context.Context, _ *engine.ToolEnv, c engine.ToolCall) (engine.ToolResult, error) {
				if strings.Contains(string(c.Arguments), "Bob") {
					return engine.ToolResult{Content: json.RawMessage(`{"error":"insufficient funds"}`), IsError: true}, nil
				}
				return engine.ToolResult{Content: json.RawMessage(`{"status":"sent","from":"` + card + `"}`)}, nil
			},
		},
	}
}

// newBank is an engine with the banking privacy policy and rec as its Recorder.
func newBank(t testing.TB, rec engine.Recorder) *engine.Engine {
	t.Helper()
	tenants, err := engine.NewStaticTenants(bankTenant())
	if err != nil {
		t.Fatal(err)
	}
	privacy, err := pii.NewPrivacy(&pii.PrivacyOptions{Default: pii.Banking()})
	if err != nil {
		t.Fatal(err)
	}
	cfg := engine.Config{Tenants: tenants, Model: bankModel(), Toolset: bankTools(), SigningKey: signingKey, Privacy: privacy,
		Logger: slog.New(slog.DiscardHandler)}
	if rec != nil {
		cfg.Recorder = rec
	}
	e, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

var ann = &engine.Caller{EngineKey: engineKey, UserToken: userToken, UserID: "customer-0042"}

// say runs a turn in-process and returns its confirm widget, if any.
func say(t testing.TB, e *engine.Engine, conv, text string) *widgets.Confirm {
	t.Helper()
	var confirm *widgets.Confirm
	for ev, err := range e.Turn(context.Background(), ann, &engine.TurnInput{Transcript: text, ConversationID: conv}) {
		var failed *engine.TurnError
		if errors.As(err, &failed) {
			continue
		}
		if err != nil {
			t.Fatalf("turn: %v", err)
		}
		if ev.Spec != nil {
			for _, w := range ev.Spec.Widgets {
				if c, ok := w.(widgets.Confirm); ok {
					confirm = &c
				}
			}
		}
	}
	return confirm
}

func execute(t testing.TB, e *engine.Engine, c *widgets.Confirm) (*engine.ExecuteResult, error) {
	return e.Execute(context.Background(), ann, &engine.ExecuteInput{Execute: c.Execute, Method: "faceid", VerifiedAt: time.Now()})
}

// TestTheEngineRecordsAConversation drives the engine in-process under the banking policy: a
// turn that says a card number and an IBAN, a confirmed transfer, a transfer the backend
// declines. The record holds each, in order; it verifies, exports and verifies offline against
// the public key; and no card number or IBAN is in the SQLite files nor in the export.
func TestTheEngineRecordsAConversation(t *testing.T) {
	f := newFixture(t, &record.Options{Key: signingKey})
	e := newBank(t, f.rec)

	say(t, e, "conv-1", "my card is "+card+" and my IBAN "+iban)
	ok := say(t, e, "conv-1", "send 20 to Alex")
	if ok == nil {
		t.Fatal("no confirm")
	}
	if res, err := execute(t, e, ok); err != nil || res.Done.Type != "success" {
		t.Fatalf("execute: %+v %v", res, err)
	}
	no := say(t, e, "conv-1", "and 5000 to Bob")
	if no == nil {
		t.Fatal("no confirm")
	}
	if _, err := execute(t, e, no); err != nil {
		t.Fatalf("a declined execute: %v", err)
	}
	f.close(t) // flushes and writes the final checkpoint
	f.open(t, &record.Options{Key: signingKey})

	chains, err := f.store.Chains(context.Background(), record.ChainQuery{Tenant: engineKey, User: "customer-0042"})
	if err != nil || len(chains) != 1 {
		t.Fatalf("%d chains for the user, %v", len(chains), err)
	}
	es, err := f.store.Entries(context.Background(), chains[0].ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range es {
		kinds = append(kinds, string(e.Kind))
	}
	if got := strings.Join(kinds, " "); got != "turn turn action outcome turn action outcome" {
		t.Fatalf("the chain holds %s", got)
	}
	rep := f.verify(t)
	if !rep.OK() || rep.Uncovered != 0 {
		t.Fatalf("Verify: %+v", rep)
	}
	var exp bytes.Buffer
	if err := f.rec.Export(context.Background(), &exp, record.ExportQuery{Tenant: engineKey, User: "customer-0042"}); err != nil {
		t.Fatal(err)
	}
	if rep, err := record.VerifyExport(bytes.NewReader(exp.Bytes()), f.pub); err != nil || !rep.OK() || rep.Entries != 7 {
		t.Fatalf("VerifyExport: %+v %v", rep, err)
	}
	for _, want := range []string{`"outcome":"ok"`, `"outcome":"declined"`, "insufficient funds", "Send money", `"method":"faceid"`, "You said: my card is"} {
		if !strings.Contains(exp.String(), want) {
			t.Errorf("the export lacks %s", want)
		}
	}
	f.close(t)
	var files []byte
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, _ := os.ReadFile(f.file + suffix)
		files = append(files, b...)
	}
	if len(files) == 0 {
		t.Fatal("no database file")
	}
	// The test command's scan reads the record as it rests, and the export, for the numbers.
	enginetest.KeepArtifact(enginetest.ArtifactRecord, files)
	enginetest.KeepArtifact(enginetest.ArtifactRecord, exp.Bytes())
	for _, leak := range []string{card, strings.ReplaceAll(card, " ", ""), iban, strings.ReplaceAll(iban, " ", ""), userToken} {
		if bytes.Contains(files, []byte(leak)) {
			t.Errorf("the SQLite files hold %q", leak)
		}
		if strings.Contains(exp.String(), leak) {
			t.Errorf("the export holds %q", leak)
		}
	}
}

// TestAnActionThatCannotBeRecordedDoesNotRun: with the record's store down, the engine refuses
// the execute (503 record_unavailable) and the backend is not called.
func TestAnActionThatCannotBeRecordedDoesNotRun(t *testing.T) {
	f := newFixture(t, &record.Options{Key: signingKey, ActionTimeout: 200 * time.Millisecond})
	fl := &flaky{Store: f.store}
	rec, err := record.New(fl, &record.Options{Key: signingKey, ActionTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close(context.Background())
	e := newBank(t, rec)
	c := say(t, e, "conv-1", "send 20 to Alex")
	fl.down.Store(true)
	_, err = execute(t, e, c)
	var p *engine.Problem
	if !errors.As(err, &p) || p.Code != engine.CodeRecordUnavailable {
		t.Fatalf("execute with the record down: %v, want record_unavailable", err)
	}
	fl.down.Store(false)
	if res, err := execute(t, e, c); err != nil || res.Done.Type != "success" {
		t.Fatalf("the same execute once the record is back: %+v %v", res, err)
	}
}
