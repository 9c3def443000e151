package intent

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
)

// defaultErrorText is said when a tool failed and the configuration has no error copy for the
// locale.
const defaultErrorText = "Sorry, something went wrong on our side. Please try again in a moment."

// answer returns the events of one completion for req: the data tool calls the intent still
// needs, or its answer from their results, or only a finish once the turn is answered.
func (c *Config) answer(req *engine.ModelRequest, now time.Time) []engine.ModelEvent {
	kinds := toolKinds(req.Tools)
	t := readTurn(req, kinds)
	if t.answered {
		return []engine.ModelEvent{finishEvent(engine.FinishStop)}
	}
	in, slots := c.home, map[string]any{}
	if req.Mode != engine.ModeHome {
		in, slots = c.understand(t.user, t.previous, now)
	}
	def := "en"
	if req.Tenant != nil && req.Tenant.Locale != "" {
		def = req.Tenant.Locale
	}
	locale := cmp.Or(req.Locale, def)
	resp, _ := in.responses.pick(locale, def)
	s := &step{intent: in, n: t.steps + 1, kinds: kinds}
	sc := scope{root: map[string]any{"slots": slots}}

	if len(in.missing(slots)) > 0 {
		s.say(resp.ask.render(sc))
		return s.finish(engine.FinishStop)
	}

	results := make(map[string]any)
	var (
		failure map[string]any
		pending []*call
	)
	fail := func(info map[string]any) {
		if failure == nil {
			failure = info
		}
	}
	for _, tc := range in.tools {
		r, got := t.results[tc.name]
		switch {
		case !s.offers(tc.name, engine.ToolData):
			fail(failureInfo(tc.name, "tool_unavailable", nil))
		case got && r.isError:
			fail(failureInfo(tc.name, "tool_error", r.value))
		case got:
			results[tc.name] = r.value
		case t.called[tc.name]:
			fail(failureInfo(tc.name, "no_result", nil))
		default:
			pending = append(pending, tc)
		}
	}
	if in.action != nil && !s.offers(in.action.name, engine.ToolAction) {
		fail(failureInfo(in.action.name, "tool_unavailable", nil))
	}
	if failure == nil && len(pending) > 0 {
		for _, tc := range pending {
			s.call(tc.name, tc.arguments(sc))
		}
		return s.finish(engine.FinishToolCalls)
	}

	sc.root["results"] = results
	if failure != nil {
		sc.root["error"] = failure
		text := resp.errText
		if text.empty() {
			text, _ = c.errorText.pick(locale, def)
		}
		if text.empty() {
			s.say(defaultErrorText)
		} else {
			s.say(text.render(sc))
		}
		s.suggest(resp, sc)
		return s.finish(engine.FinishStop)
	}

	speak := resp.speak
	if req.Mode == engine.ModeVoice && !resp.voice.empty() {
		speak = resp.voice
	}
	s.say(speak.render(sc))
	if in.action != nil {
		s.call(in.action.name, in.action.arguments(sc))
	}
	for _, w := range resp.widgets {
		if tool, args, ok := w.render(sc, c.maxList); ok {
			s.ui(tool, args)
		}
	}
	if f := truncate(resp.follow.render(sc), widgets.MaxTextLen); f != "" && resp.follow.resolves(sc) {
		s.ui(widgets.ToolSetFollow, map[string]string{"text": f})
	}
	s.suggest(resp, sc)
	return s.finish(engine.FinishStop)
}

// failureInfo is what an error template finds under "error": the tool, and the "error" and
// "message" members of the tool's result when it has them.
func failureInfo(tool, code string, result any) map[string]any {
	info := map[string]any{"tool": tool, "error": code, "message": ""}
	if m, ok := result.(map[string]any); ok {
		for _, k := range [...]string{"error", "message"} {
			if v, ok := m[k].(string); ok && v != "" {
				info[k] = v
			}
		}
	}
	return info
}

// step collects the events of one completion.
type step struct {
	intent *intentDef
	n      int // the completion's number within the turn
	kinds  map[string]engine.ToolKind
	calls  int
	events []engine.ModelEvent
}

// offers reports whether the request offers the tool named, of that kind.
func (s *step) offers(name string, kind engine.ToolKind) bool {
	k, ok := s.kinds[name]
	return ok && k == kind
}

// say streams text word by word, each delta keeping the space after its word, as a language
// model's tokens would arrive.
func (s *step) say(text string) {
	for w := range strings.SplitAfterSeq(text, " ") {
		if w != "" {
			s.events = append(s.events, engine.TextEvent(w))
		}
	}
}

// call adds a tool call with an ID unique within the turn.
func (s *step) call(name string, args json.RawMessage) {
	s.calls++
	s.events = append(s.events, engine.ToolCallEvent(engine.ToolCall{
		ID:        fmt.Sprintf("call_%s_%d_%d", s.intent.name, s.calls, s.n),
		Name:      name,
		Arguments: args,
	}))
}

// ui adds a call of a UI tool the request offers; it leaves out one it does not.
func (s *step) ui(name string, args any) {
	if !s.offers(name, engine.ToolUI) {
		return
	}
	b, err := json.Marshal(args)
	if err != nil { // args are plain structs of strings and numbers
		return
	}
	s.call(name, b)
}

// suggest adds the response's suggestions, leaving out those whose placeholders name nothing
// (after a failed tool, "Reorder {results.orders.0.name}" would be "Reorder").
func (s *step) suggest(resp *response, sc scope) {
	var out []string
	for _, t := range resp.suggestions {
		if !t.resolves(sc) {
			continue
		}
		if v := truncate(t.render(sc), 80); v != "" {
			out = append(out, v)
		}
	}
	if len(out) > 0 {
		s.ui(widgets.ToolSetSuggestions, map[string][]string{"suggestions": out})
	}
}

func (s *step) finish(r engine.FinishReason) []engine.ModelEvent {
	return append(s.events, finishEvent(r))
}

// ModelName names the intent model in its finish events, so that usage reports and traces
// tell its calls, which no provider serves and whose tokens are estimated, from others'.
const ModelName = "intent"

func finishEvent(r engine.FinishReason) engine.ModelEvent {
	ev := engine.FinishEvent(r)
	ev.Model = ModelName
	return ev
}
