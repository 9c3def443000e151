package intent

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/convengine/engine"
)

// maxPrevious bounds the earlier user messages read to fill the slots of a question: "send
// money", "to Jordan", "30 dollars" needs two.
const maxPrevious = 4

// turn is what the messages of a request say about the turn in progress. The model keeps no
// state between calls: every step reads it again from the messages.
type turn struct {
	// user is the message being answered; empty in home mode.
	user string
	// previous are the user messages before it, oldest first, at most maxPrevious of them:
	// the replies that may still be filling the slots of an earlier question.
	previous []string
	// steps counts the completions of this turn so far.
	steps int
	// answered is set once the turn produced text, or called a UI or action tool: the engine
	// only calls again after that to collect the results of those calls.
	answered bool
	// called holds the tools called so far in this turn, results what they returned.
	called  map[string]bool
	results map[string]toolResult
}

// toolResult is one tool message: its decoded JSON content and whether the call failed.
type toolResult struct {
	value   any
	isError bool
}

// readTurn finds the current turn in req.Messages: what follows the last user message, or in
// home mode (where there is none) the trailing tool-call exchanges.
func readTurn(req *engine.ModelRequest, kinds map[string]engine.ToolKind) *turn {
	t := &turn{called: make(map[string]bool), results: make(map[string]toolResult)}
	msgs := req.Messages
	u := -1
	if req.Mode != engine.ModeHome {
		u = lastUser(msgs)
	}
	start := u + 1
	if u >= 0 {
		t.user = msgs[u].Content
		for p := lastUser(msgs[:u]); p >= 0 && len(t.previous) < maxPrevious; p = lastUser(msgs[:p]) {
			t.previous = append(t.previous, msgs[p].Content)
		}
		slices.Reverse(t.previous)
	} else {
		start = len(msgs)
		for start > 0 && partOfStep(msgs[start-1]) {
			start--
		}
	}
	names := make(map[string]string)
	for _, m := range msgs[start:] {
		switch m.Role {
		case engine.RoleAssistant:
			t.steps++
			if strings.TrimSpace(m.Content) != "" {
				t.answered = true
			}
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
				t.called[c.Name] = true
				if kind, ok := kinds[c.Name]; !ok || kind != engine.ToolData {
					t.answered = true
				}
			}
		case engine.RoleTool:
			name := m.Name
			if name == "" {
				name = names[m.ToolCallID]
			}
			r := toolResult{isError: m.IsError}
			if err := json.Unmarshal([]byte(m.Content), &r.value); err != nil {
				r = toolResult{isError: true, value: map[string]any{"error": "invalid_result", "message": m.Content}}
			}
			t.results[name] = r
		}
	}
	return t
}

// lastUser finds the last thing the user said; the app's quoted data is not that.
func lastUser(msgs []engine.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == engine.RoleUser && !msgs[i].IsAppContext() {
			return i
		}
	}
	return -1
}

// partOfStep reports whether m belongs to the tool loop of a turn: an assistant message
// that called tools, or a tool result.
func partOfStep(m engine.Message) bool {
	return m.Role == engine.RoleTool || (m.Role == engine.RoleAssistant && len(m.ToolCalls) > 0)
}

// toolKinds indexes the tools a request offers by name.
func toolKinds(tools []engine.ToolSpec) map[string]engine.ToolKind {
	m := make(map[string]engine.ToolKind, len(tools))
	for _, t := range tools {
		m[t.Name] = t.Kind
	}
	return m
}
