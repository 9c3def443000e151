package gotools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/gotools"
	"github.com/convengine/engine/widgets"
)

const (
	testKey   = "pk_gotools"
	testToken = "user-token-1"
)

type Currency string

// currencies is the enum of Currency, given to the tools through gotools.TypeSchemas.
var currencies = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[Currency](): {Type: "string", Enum: []any{"USD", "EUR"}},
}

type transferArgs struct {
	Amount   float64  `json:"amount" jsonschema:"the amount to send"`
	To       string   `json:"to" jsonschema:"the payee's name"`
	Currency Currency `json:"currency,omitempty"`
	Memo     *string  `json:"memo,omitempty"`
}

type transferResult struct {
	Reference string  `json:"reference"`
	Sent      float64 `json:"sent"`
}

type balanceArgs struct {
	Account string `json:"account" jsonschema:"the account's last four digits"`
	Limit   int    `json:"limit,omitempty"`
}

type balance struct {
	Balance float64 `json:"balance"`
}

// recorder keeps the typed values a tool's function received.
type recorder[In any] struct {
	mu   sync.Mutex
	ins  []In
	envs []engine.ToolEnv
}

func (r *recorder[In]) add(env *engine.ToolEnv, in In) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ins = append(r.ins, in)
	r.envs = append(r.envs, *env)
}

func (r *recorder[In]) calls() []In {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]In(nil), r.ins...)
}

func tenant(actions ...string) *engine.Tenant {
	t := &engine.Tenant{
		Key: testKey, Name: "Test Bank",
		Environments: map[string]*engine.Environment{engine.EnvProduction: {BackendURL: "http://127.0.0.1:1"}},
		Actions:      map[string]*engine.Action{},
	}
	for _, a := range actions {
		t.Actions[a] = &engine.Action{Confirm: map[string]engine.ConfirmCopy{
			"en": {Title: "Send money", Body: "Send ${amount|money} to {to}?", ConfirmLabel: "Send", CancelLabel: "Cancel"},
		}}
	}
	return t
}

func newEngine(t *testing.T, model engine.Model, tools engine.Toolset, ten *engine.Tenant) *engine.Engine {
	t.Helper()
	store, err := engine.NewStaticTenants(ten)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Config{Tenants: store, Model: model, Toolset: tools,
		SigningKey: bytes.Repeat([]byte("k"), 32), Logger: enginetest.DebugLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

var caller = &engine.Caller{EngineKey: testKey, UserToken: testToken}

// turn runs one in-process turn and returns its events.
func turn(t *testing.T, e *engine.Engine, transcript string) []engine.Event {
	t.Helper()
	var evs []engine.Event
	for ev, err := range e.Turn(t.Context(), caller, &engine.TurnInput{Transcript: transcript}) {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if len(evs) == 0 || evs[len(evs)-1].Type != engine.EventDone {
		t.Fatalf("the turn did not end with done: %+v", evs)
	}
	return evs
}

// callingModel calls tool with args on its first step and, on the next, keeps the requests
// and the tool messages it was given and says "Done.".
type callingModel struct {
	tool, args string
	mu         sync.Mutex
	reqs       []*engine.ModelRequest
	results    []engine.Message
}

func (m *callingModel) model() engine.Model {
	return enginetest.ModelFunc(func(_ context.Context, req *engine.ModelRequest) []engine.ModelEvent {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.reqs = append(m.reqs, req)
		if enginetest.StepOf(req.Messages) == 0 {
			return []engine.ModelEvent{enginetest.ToolCall("call-1", m.tool, m.args), engine.FinishEvent(engine.FinishToolCalls)}
		}
		for _, msg := range req.Messages {
			if msg.Role == engine.RoleTool {
				m.results = append(m.results, msg)
			}
		}
		return enginetest.Text("Done.")
	})
}

func (m *callingModel) toolResult(t *testing.T) engine.Message {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.results) != 1 {
		t.Fatalf("the model saw %d tool results, want 1: %+v", len(m.results), m.results)
	}
	return m.results[0]
}

func transferTool(rec *recorder[transferArgs], opts ...gotools.Option) *gotools.Tool {
	return gotools.Func("transfer", "Send money to a payee.",
		func(_ context.Context, env *engine.ToolEnv, in transferArgs) (transferResult, error) {
			rec.add(env, in)
			return transferResult{Reference: "T-1", Sent: in.Amount}, nil
		}, append([]gotools.Option{gotools.TypeSchemas(currencies)}, opts...)...)
}

func balanceTool(rec *recorder[balanceArgs], err error) *gotools.Tool {
	return gotools.Func("get_balance", "Get the balance of one account.",
		func(_ context.Context, env *engine.ToolEnv, in balanceArgs) (balance, error) {
			rec.add(env, in)
			if err != nil {
				return balance{}, err
			}
			return balance{Balance: 12.5}, nil
		}, gotools.Status("Checking your balance"))
}

// TestModelReceivesTheDerivedSchema: the tool the model is offered has, as its parameters,
// exactly the schema jsonschema.For derives from the arguments' struct (descriptions, required
// fields, the enum of a type schema), and an action tool is offered as an action.
func TestModelReceivesTheDerivedSchema(t *testing.T) {
	set, err := gotools.New(balanceTool(new(recorder[balanceArgs]), nil), transferTool(new(recorder[transferArgs]), gotools.Action()))
	if err != nil {
		t.Fatal(err)
	}
	m := &callingModel{tool: "get_balance", args: `{"account":"1234"}`}
	e := newEngine(t, m.model(), set, tenant("transfer"))
	turn(t, e, "balance?")

	for name, want := range map[string]func() (*jsonschema.Schema, error){
		"get_balance": func() (*jsonschema.Schema, error) { return jsonschema.For[balanceArgs](nil) },
		"transfer": func() (*jsonschema.Schema, error) {
			return jsonschema.For[transferArgs](&jsonschema.ForOptions{TypeSchemas: currencies})
		},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := want()
			if err != nil {
				t.Fatal(err)
			}
			wantJSON, _ := json.Marshal(s)
			var spec *engine.ToolSpec
			for _, ts := range m.reqs[0].Tools {
				if ts.Name == name {
					spec = &ts
				}
			}
			if spec == nil {
				t.Fatalf("the model was not offered %s", name)
			}
			if string(spec.Parameters) != string(wantJSON) {
				t.Errorf("parameters\n got %s\nwant %s", spec.Parameters, wantJSON)
			}
			wantKind := engine.ToolData
			if name == "transfer" {
				wantKind = engine.ToolAction
				for _, part := range []string{`"required":["amount","to"]`, `"description":"the amount to send"`,
					`"enum":["USD","EUR"]`, `"additionalProperties":false`} {
					if !strings.Contains(string(spec.Parameters), part) {
						t.Errorf("the schema lacks %s: %s", part, spec.Parameters)
					}
				}
			}
			if spec.Kind != wantKind {
				t.Errorf("kind %v, want %v", spec.Kind, wantKind)
			}
		})
	}
}

// TestValidCallReachesTheFunction: the model's call arrives as the typed value, with the
// caller's environment, and the function's result is what the model sees.
func TestValidCallReachesTheFunction(t *testing.T) {
	rec := new(recorder[balanceArgs])
	set, err := gotools.New(balanceTool(rec, nil))
	if err != nil {
		t.Fatal(err)
	}
	m := &callingModel{tool: "get_balance", args: `{"account":"1234","limit":3}`}
	e := newEngine(t, m.model(), set, tenant())
	evs := turn(t, e, "balance?")

	if got := rec.calls(); len(got) != 1 || got[0] != (balanceArgs{Account: "1234", Limit: 3}) {
		t.Fatalf("the function received %+v", got)
	}
	if env := rec.envs[0]; env.Tenant.Key != testKey || env.UserToken.Reveal() != testToken || env.Environment.Name != engine.EnvProduction {
		t.Errorf("the function's environment: tenant %s, env %s", env.Tenant.Key, env.Environment.Name)
	}
	if res := m.toolResult(t); res.IsError || res.Content != `{"balance":12.5}` {
		t.Errorf("the model saw %+v", res)
	}
	var status string
	for _, ev := range evs {
		if ev.Type == engine.EventStatus {
			status = ev.Status
		}
	}
	if status != "Checking your balance" {
		t.Errorf("status %q", status)
	}
}

// TestInvalidCallIsAnErrorResult: arguments of the wrong type, missing a required field or
// with a field the struct does not have reach the model as an error result, never the
// function.
func TestInvalidCallIsAnErrorResult(t *testing.T) {
	for name, args := range map[string]string{
		"wrong type":       `{"account":1234}`,
		"missing required": `{"limit":3}`,
		"unknown field":    `{"account":"1234","pin":"0000"}`,
		"fractional int":   `{"account":"1234","limit":2.5}`,
	} {
		t.Run(name, func(t *testing.T) {
			rec := new(recorder[balanceArgs])
			set, err := gotools.New(balanceTool(rec, nil))
			if err != nil {
				t.Fatal(err)
			}
			m := &callingModel{tool: "get_balance", args: args}
			turn(t, newEngine(t, m.model(), set, tenant()), "balance?")
			if got := rec.calls(); len(got) != 0 {
				t.Errorf("the function ran with %+v", got)
			}
			if res := m.toolResult(t); !res.IsError || !strings.Contains(res.Content, "invalid_arguments") {
				t.Errorf("the model saw %+v", res)
			}
		})
	}
}

// TestSetChecksArguments: the Set checks what it is given itself, for callers other than the
// engine's turns (a composed toolset, the execute endpoint): the schema, and then what
// encoding/json refuses though the schema allows it.
func TestSetChecksArguments(t *testing.T) {
	type when struct {
		At time.Time `json:"at"`
	}
	var ran int
	tool := gotools.Func("remind", "Set a reminder.", func(context.Context, *engine.ToolEnv, when) (string, error) {
		ran++
		return "ok", nil
	})
	set, err := gotools.New(tool)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct{ args, want string }{
		"valid":          {`{"at":"2026-11-26T10:00:00Z"}`, ""},
		"not a time":     {`{"at":"tomorrow"}`, "invalid_arguments"},
		"missing":        {`{}`, "invalid_arguments"},
		"no arguments":   {``, "invalid_arguments"},
		"not json":       {`{"at":`, "not valid JSON"},
		"not an object":  {`["2026-11-26T10:00:00Z"]`, "must be a JSON object"},
		"trailing value": {`{"at":"2026-11-26T10:00:00Z"} {}`, "not valid JSON"},
	} {
		t.Run(name, func(t *testing.T) {
			ran = 0
			res, err := set.Call(t.Context(), &engine.ToolEnv{}, engine.ToolCall{ID: "1", Name: "remind", Arguments: json.RawMessage(tc.args)})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && (res.IsError || string(res.Content) != `"ok"` || ran != 1):
				t.Errorf("result %s (isError %v), ran %d", res.Content, res.IsError, ran)
			case tc.want != "" && (!res.IsError || !strings.Contains(string(res.Content), tc.want) || ran != 0):
				t.Errorf("result %s (isError %v), ran %d; want an error result with %s", res.Content, res.IsError, ran, tc.want)
			}
		})
	}
	if _, err := set.Call(t.Context(), &engine.ToolEnv{}, engine.ToolCall{Name: "nope"}); !errors.Is(err, engine.ErrToolNotFound) {
		t.Errorf("unknown tool: %v", err)
	}
}

// TestFunctionErrorIsAToolError: an error from the function is an error result whose message
// the model sees; the turn goes on.
func TestFunctionErrorIsAToolError(t *testing.T) {
	rec := new(recorder[balanceArgs])
	set, err := gotools.New(balanceTool(rec, errors.New("no account ends in 1234")))
	if err != nil {
		t.Fatal(err)
	}
	m := &callingModel{tool: "get_balance", args: `{"account":"1234"}`}
	evs := turn(t, newEngine(t, m.model(), set, tenant()), "balance?")
	if len(rec.calls()) != 1 {
		t.Fatalf("the function ran %d times", len(rec.calls()))
	}
	res := m.toolResult(t)
	if !res.IsError || res.Content != `{"error":"tool_error","message":"no account ends in 1234"}` {
		t.Errorf("the model saw %+v", res)
	}
	if done := evs[len(evs)-1]; done.Spec.Speak != "Done." {
		t.Errorf("the answer: %q", done.Spec.Speak)
	}
}

// TestFailuresThatAreNotResults: a function that gives up because its time-out passed, or
// that did nothing (ErrToolNotReached), fails the call, so that the engine says the tool did
// not answer, or releases a confirmed action for another try.
func TestFailuresThatAreNotResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := gotools.Func("slow", "Wait.", func(ctx context.Context, _ *engine.ToolEnv, _ struct{}) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}, gotools.Timeout(2*time.Second))
		down := gotools.Func("down", "Fail.", func(context.Context, *engine.ToolEnv, struct{}) (string, error) {
			return "", engine.ErrToolNotReached
		})
		set, err := gotools.New(slow, down)
		if err != nil {
			t.Fatal(err)
		}
		if tools, _ := set.Tools(t.Context(), nil); tools[0].Timeout != 2*time.Second {
			t.Errorf("the listed time-out is %v", tools[0].Timeout)
		}
		start := time.Now()
		_, err = set.Call(t.Context(), &engine.ToolEnv{}, engine.ToolCall{Name: "slow", Arguments: json.RawMessage(`{}`)})
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 2*time.Second {
			t.Errorf("slow: %v after %v", err, time.Since(start))
		}
		_, err = set.Call(t.Context(), &engine.ToolEnv{}, engine.ToolCall{Name: "down", Arguments: json.RawMessage(`{}`)})
		if !errors.Is(err, engine.ErrToolNotReached) {
			t.Errorf("down: %v", err)
		}
	})
}

// TestActionRunsOnlyOnExecute: an action tool's call is a confirm widget and the function does
// not run; it runs once the user confirms, with the confirmed arguments as its typed value and
// the action's idempotency key. An action the tenant does not list is refused to the model.
func TestActionRunsOnlyOnExecute(t *testing.T) {
	const args = `{"amount":20,"to":"Alex","currency":"USD"}`
	t.Run("allow-listed", func(t *testing.T) {
		rec := new(recorder[transferArgs])
		set, err := gotools.New(transferTool(rec, gotools.Action()))
		if err != nil {
			t.Fatal(err)
		}
		m := &callingModel{tool: "transfer", args: args}
		e := newEngine(t, m.model(), set, tenant("transfer"))
		evs := turn(t, e, "send 20 dollars to Alex")
		if n := len(rec.calls()); n != 0 {
			t.Fatalf("the action ran %d times during the turn", n)
		}
		spec := evs[len(evs)-1].Spec
		if len(spec.Widgets) != 1 {
			t.Fatalf("widgets: %+v", spec.Widgets)
		}
		confirm, ok := spec.Widgets[0].(widgets.Confirm)
		if !ok || confirm.Body != "Send $20.00 to Alex?" {
			t.Fatalf("not the confirm: %+v", spec.Widgets[0])
		}
		res, err := e.Execute(t.Context(), caller, &engine.ExecuteInput{Execute: confirm.Execute, Method: "faceid", VerifiedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if res.Done.Type != "success" {
			t.Errorf("card %+v", res.Done)
		}
		got := rec.calls()
		if len(got) != 1 || got[0].Amount != 20 || got[0].To != "Alex" || got[0].Currency != "USD" {
			t.Fatalf("the action ran with %+v", got)
		}
		if rec.envs[0].IdempotencyKey == "" {
			t.Error("the action ran without an idempotency key")
		}
		// The same token again: the first result, and the function does not run again.
		again, err := e.Execute(t.Context(), caller, &engine.ExecuteInput{Execute: confirm.Execute, Method: "faceid", VerifiedAt: time.Now()})
		if err != nil || !again.Replayed || len(rec.calls()) != 1 {
			t.Errorf("replay: %+v %v, %d runs", again, err, len(rec.calls()))
		}
	})
	t.Run("not allow-listed", func(t *testing.T) {
		rec := new(recorder[transferArgs])
		set, err := gotools.New(transferTool(rec, gotools.Action()))
		if err != nil {
			t.Fatal(err)
		}
		m := &callingModel{tool: "transfer", args: args}
		evs := turn(t, newEngine(t, m.model(), set, tenant()), "send 20 dollars to Alex")
		if n := len(rec.calls()); n != 0 {
			t.Fatalf("the action ran %d times", n)
		}
		if res := m.toolResult(t); !res.IsError || !strings.Contains(res.Content, "action_not_allowed") {
			t.Errorf("the model saw %+v", res)
		}
		if w := evs[len(evs)-1].Spec.Widgets; len(w) != 0 {
			t.Errorf("widgets: %+v", w)
		}
	})
}

// TestNewRefuses: what New reports instead of serving a tool the model could not call.
func TestNewRefuses(t *testing.T) {
	ok := func(context.Context, *engine.ToolEnv, balanceArgs) (balance, error) { return balance{}, nil }
	type withChan struct {
		C chan int `json:"c"`
	}
	for name, tc := range map[string]struct {
		tools []*gotools.Tool
		want  string
	}{
		"duplicate": {[]*gotools.Tool{gotools.Func("a", "", ok), gotools.Func("a", "", ok)}, "same name"},
		"bad name":  {[]*gotools.Tool{gotools.Func("get balance", "", ok)}, "letters, digits"},
		"no name":   {[]*gotools.Tool{gotools.Func("", "", ok)}, "letters, digits"},
		"UI tool":   {[]*gotools.Tool{gotools.Func(widgets.ToolShowStat, "", ok)}, "UI tools"},
		"not a struct": {[]*gotools.Tool{gotools.Func("a", "", func(context.Context, *engine.ToolEnv, string) (string, error) {
			return "", nil
		})}, "must be a struct"},
		"channel": {[]*gotools.Tool{gotools.Func("a", "", func(context.Context, *engine.ToolEnv, withChan) (string, error) {
			return "", nil
		})}, "deriving the schema"},
		"nil function":      {[]*gotools.Tool{gotools.Func[balanceArgs, balance]("a", "", nil)}, "nil"},
		"nil tool":          {[]*gotools.Tool{nil}, "nil"},
		"negative time-out": {[]*gotools.Tool{gotools.Func("a", "", ok, gotools.Timeout(-time.Second))}, "negative"},
	} {
		t.Run(name, func(t *testing.T) {
			set, err := gotools.New(tc.tools...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, %v; want an error with %q", set, err, tc.want)
			}
			if name == "duplicate" && !errors.Is(err, gotools.ErrDuplicateTool) {
				t.Errorf("%v does not wrap ErrDuplicateTool", err)
			}
		})
	}
}

// FuzzCall: whatever arguments a model sends, a call never panics, and the function runs only
// with arguments the schema accepts, decoded as encoding/json decodes them.
func FuzzCall(f *testing.F) {
	for _, s := range []string{`{"amount":20,"to":"Alex"}`, `{"amount":"20","to":"Alex"}`, `{"to":"Alex"}`,
		`{"amount":1,"to":"A","currency":"GBP"}`, `{"amount":1,"to":"A","memo":null}`, `[]`, `null`, ``, `{"amount":1e400,"to":""}`} {
		f.Add(s)
	}
	var ran transferArgs
	set, err := gotools.New(gotools.Func("transfer", "", func(_ context.Context, _ *engine.ToolEnv, in transferArgs) (transferResult, error) {
		ran = in
		return transferResult{Sent: in.Amount}, nil
	}, gotools.TypeSchemas(currencies)))
	if err != nil {
		f.Fatal(err)
	}
	schema, _ := jsonschema.For[transferArgs](&jsonschema.ForOptions{TypeSchemas: currencies})
	resolved, err := schema.Resolve(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, args string) {
		ran = transferArgs{}
		res, err := set.Call(context.Background(), &engine.ToolEnv{}, engine.ToolCall{Name: "transfer", Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("an error, not a result: %v", err)
		}
		if !json.Valid(res.Content) {
			t.Fatalf("invalid JSON result %q", res.Content)
		}
		if res.IsError {
			return
		}
		var v any
		if json.Unmarshal([]byte(args), &v) != nil || resolved.Validate(v) != nil {
			t.Fatalf("the function ran with arguments the schema refuses: %s", args)
		}
		var want transferArgs
		if err := json.Unmarshal([]byte(args), &want); err != nil || !reflect.DeepEqual(ran, want) {
			t.Fatalf("the function got %+v, encoding/json decodes %+v (%v)", ran, want, err)
		}
	})
}
