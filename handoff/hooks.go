package handoff

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"unicode"
	"weak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
)

// ToolName is the built-in tool offered to every tenant's model: the intent model's "person"
// intent calls it, and so may a language model when the customer asks for a person.
const ToolName = "transfer_to_agent"

// WidgetType is the type of the widget that tells the customer of a handoff:
// {"type":"handoff","id","status","agent"}.
const WidgetType = "handoff"

// turnNote is what the switchboard knows of a running turn, found by its *engine.ToolEnv.
type turnNote struct {
	who     Who
	mu      sync.Mutex
	started *State // the handoff the turn started
	relayed bool   // the turn went to a person
	tools   []string
}

func (s *Switchboard) note(env *engine.ToolEnv) *turnNote {
	if env == nil {
		return nil
	}
	v, ok := s.turns.Load(weak.Make(env))
	if !ok {
		return nil
	}
	return v.(*turnNote)
}

// remember keeps n for as long as env lives: the engine drops both with the turn.
func (s *Switchboard) remember(env *engine.ToolEnv, n *turnNote) {
	k := weak.Make(env)
	if _, loaded := s.turns.LoadOrStore(k, n); !loaded {
		runtime.AddCleanup(env, func(k weak.Pointer[engine.ToolEnv]) { s.turns.Delete(k) }, k)
	}
}

func channel(m engine.Mode) string {
	if m == "" {
		return string(engine.ModeText)
	}
	return string(m)
}

// Guards returns the host's guards (nil for none) with the switchboard's around them, for Config.Guards: while a
// person holds a conversation its turns go to the person (no model is called); a user who asks
// the same thing Repeats times is handed over; the turn that starts a handoff carries the
// handoff widget; the turn after one is released tells the model what the person wrote.
func (s *Switchboard) Guards(hostGuards *engine.Guards) *engine.Guards {
	var host engine.Guards
	if hostGuards != nil {
		host = *hostGuards
	}
	g := host
	g.BeforeTurn = func(ctx context.Context, t *engine.TurnInfo) (string, error) {
		if host.BeforeTurn != nil {
			if speak, err := host.BeforeTurn(ctx, t); speak != "" || err != nil {
				return speak, err
			}
		}
		return s.beforeTurn(ctx, t)
	}
	g.ModelRequest = func(ctx context.Context, t *engine.TurnInfo, req *engine.ModelRequest) error {
		if host.ModelRequest != nil {
			if err := host.ModelRequest(ctx, t, req); err != nil {
				return err
			}
		}
		s.afterRelease(ctx, t, req)
		return nil
	}
	g.ToolCall = func(ctx context.Context, env *engine.ToolEnv, call engine.ToolCall, next func(context.Context, engine.ToolCall) (engine.ToolResult, error)) (engine.ToolResult, error) {
		var res engine.ToolResult
		var err error
		if host.ToolCall != nil {
			res, err = host.ToolCall(ctx, env, call, next)
		} else {
			res, err = next(ctx, call)
		}
		if n := s.note(env); n != nil && call.Name != ToolName {
			outcome := "ok"
			if err != nil || res.IsError {
				outcome = "failed"
			}
			n.mu.Lock()
			n.tools = append(n.tools, call.Name+" ("+outcome+")")
			n.mu.Unlock()
		}
		return res, err
	}
	g.Spec = func(ctx context.Context, t *engine.TurnInfo, spec *widgets.Spec) error {
		if host.Spec != nil {
			if err := host.Spec(ctx, t, spec); err != nil {
				return err
			}
		}
		s.afterTurn(ctx, t, spec)
		return nil
	}
	return &g
}

func (s *Switchboard) who(t *engine.TurnInfo) *Who {
	e := s.engine()
	if e == nil || t.Env == nil || t.Env.Tenant == nil {
		return nil
	}
	user := e.UserKey(&engine.Caller{EngineKey: t.Env.Tenant.Key, UserToken: t.Env.UserToken.Reveal()})
	env := ""
	if t.Env.Environment != nil {
		env = t.Env.Environment.Name
	}
	return &Who{Tenant: t.Env.Tenant, Environment: env, User: user, Conversation: t.ConversationID, Session: t.SessionID, Locale: t.Locale, Channel: channel(t.Mode)}
}

func (s *Switchboard) beforeTurn(ctx context.Context, t *engine.TurnInfo) (string, error) {
	w := s.who(t)
	if w == nil {
		return "", nil
	}
	c := s.tenantConfig(w.Tenant)
	n := &turnNote{who: *w}
	s.remember(t.Env, n)
	if c == nil || t.Mode == engine.ModeHome || t.Transcript == "" {
		return "", nil
	}
	st, err := s.store.Latest(ctx, w.Tenant.Key, w.User, w.Conversation)
	if err == nil && st.Status.Open() {
		// A person holds the conversation: the turn is theirs.
		n.relayed = true
		if err := s.Relay(ctx, st, t.Transcript); err != nil {
			return line("failed", w.Locale), nil
		}
		return line("sent", w.Locale, "{agent}", st.personName()), nil
	}
	text := s.mask(w.Tenant, clip(t.Transcript, 1000))
	if r := c.repeats(); r > 1 {
		lines, err := s.store.Lines(ctx, w.Tenant.Key, w.User, w.Conversation)
		if err == nil && repeated(lines, text, r-1) {
			_ = s.store.AddLines(ctx, w.Tenant.Key, w.User, w.Conversation, Line{Role: "user", Text: text, At: s.now()})
			out, err := s.start(ctx, w, "the customer asked the same thing "+itoa(r)+" times without an answer that helped")
			if err != nil || out.State == nil {
				return "", nil // the assistant goes on
			}
			n.started = out.State
			return out.Say, nil
		}
	}
	_ = s.store.AddLines(ctx, w.Tenant.Key, w.User, w.Conversation, Line{Role: "user", Text: text, At: s.now()})
	return "", nil
}

// repeated reports whether the last k user lines all say text, and the assistant's answers
// to them did not help: an answer that called a tool or asked for a confirmation did, and a
// customer who asks for their balance twice is answered twice, not handed over.
func repeated(lines []Line, text string, k int) bool {
	want := normal(text)
	for i := len(lines) - 1; i >= 0 && k > 0; i-- {
		if lines[i].Role == "assistant" && helped(lines[i].Text) {
			return false
		}
		if lines[i].Role != "user" {
			continue
		}
		if normal(lines[i].Text) != want {
			return false
		}
		k--
	}
	return k == 0
}

// helped reports whether an assistant's line, as afterTurn keeps it, did something.
func helped(text string) bool {
	return strings.Contains(text, " [tools: ") || strings.Contains(text, " [asked to confirm ")
}

func normal(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }), " ")
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// afterTurn keeps the assistant's answer for a later summary, and puts the handoff widget on
// the turn that started one.
func (s *Switchboard) afterTurn(ctx context.Context, t *engine.TurnInfo, spec *widgets.Spec) {
	n := s.note(t.Env)
	if n == nil {
		return
	}
	n.mu.Lock()
	started, relayed, tools := n.started, n.relayed, n.tools
	n.mu.Unlock()
	if started != nil && len(spec.Widgets) < widgets.MaxWidgets {
		fields, _ := json.Marshal(map[string]string{"id": started.ID, "status": string(started.Status)})
		spec.Widgets = append(spec.Widgets, widgets.Custom{Type: WidgetType, Fields: fields})
	}
	if relayed || s.tenantConfig(n.who.Tenant) == nil {
		return
	}
	text := spec.Speak
	if len(tools) > 0 {
		text += " [tools: " + strings.Join(tools, ", ") + "]"
	}
	for _, w := range spec.Widgets {
		if c, ok := w.(widgets.Confirm); ok {
			text += " [asked to confirm " + c.Execute.Tool + "]"
		}
	}
	w := n.who
	_ = s.store.AddLines(ctx, w.Tenant.Key, w.User, w.Conversation, Line{Role: "assistant", Text: s.mask(w.Tenant, clip(text, 1000)), At: s.now()})
}

// afterRelease tells the model, on the turns after a person released the conversation, what
// happened and the person's note.
func (s *Switchboard) afterRelease(ctx context.Context, t *engine.TurnInfo, req *engine.ModelRequest) {
	n := s.note(t.Env)
	if n == nil || n.relayed {
		return
	}
	w := n.who
	st, err := s.store.Latest(ctx, w.Tenant.Key, w.User, w.Conversation)
	if err != nil || st.Status.Open() {
		return
	}
	fact := "\nEarlier in this conversation it was handed to a person of the bank (" + st.personName() + "), and it ended: " + st.Ended + "."
	if st.Note != "" {
		fact += " The person's note for you: <person_note>" + clip(st.Note, 2000) + "</person_note>"
	}
	req.Context += fact
}

// Toolset returns the tool transfer_to_agent, for Config.Toolset combined with the tenant's
// (package toolsets): the model calls it with a reason, and the switchboard starts the
// handoff, or says why not (the tenant has none, office hours, too many).
func (s *Switchboard) Toolset() engine.Toolset { return transferTool{s} }

type transferTool struct{ s *Switchboard }

var transferSchema = json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string","maxLength":500,"description":"Why the customer needs a person, in a few words."}},"required":["reason"],"additionalProperties":false}`)

func (tt transferTool) Tools(context.Context, *engine.ToolEnv) ([]engine.Tool, error) {
	return []engine.Tool{{Name: ToolName, Parameters: transferSchema, Status: "Finding a person",
		Description: "Hand the conversation to a person of the bank (a human agent) when the customer asks for one, or when you cannot help. Say the result's \"say\" line to the customer."}}, nil
}

func (tt transferTool) Call(ctx context.Context, env *engine.ToolEnv, call engine.ToolCall) (engine.ToolResult, error) {
	if call.Name != ToolName {
		return engine.ToolResult{}, engine.ErrToolNotReached
	}
	var args struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(call.Arguments, &args)
	n := tt.s.note(env)
	if n == nil {
		return result(map[string]string{"status": "unavailable", "say": line("unavailable", "en")}), nil
	}
	out, err := tt.s.start(ctx, &n.who, args.Reason)
	if err != nil {
		tt.s.log.ErrorContext(ctx, "handoff: starting one failed", "tenant", n.who.Tenant.Key, "err", err)
		return result(map[string]string{"status": "failed", "say": line("failed", n.who.Locale)}), nil
	}
	status := "unavailable"
	if out.State != nil {
		status = string(out.State.Status)
		if out.Started {
			n.mu.Lock()
			n.started = out.State
			n.mu.Unlock()
		}
	}
	return result(map[string]string{"status": status, "say": out.Say}), nil
}

func result(v any) engine.ToolResult {
	b, _ := json.Marshal(v)
	return engine.ToolResult{Content: b}
}
