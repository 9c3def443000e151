package scenario

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
)

// Result is what one scenario came to.
type Result struct {
	Scenario *Scenario
	Turns    []*TurnResult
	// Failures are the failed expectations of all turns, in order, and those of the scenario
	// (Turn 0), such as a model tape not played to its end.
	Failures []*Failure
	// Err is why the scenario could not run (its engine, its device enrolment).
	Err      error
	Duration time.Duration
}

// The statuses of a result.
const (
	Passed  = "passed"
	Failed  = "failed"
	Skipped = "skipped" // passed, but a judge criterion was not checked
)

// Status is Failed when an expectation failed or the scenario could not run, Skipped when it
// passed with a judge criterion left unchecked, else Passed.
func (r *Result) Status() string {
	switch {
	case r.Err != nil || len(r.Failures) > 0:
		return Failed
	case len(r.SkippedJudges()) > 0:
		return Skipped
	}
	return Passed
}

// SkippedJudges are the judge criteria that were not checked, without a judge.
func (r *Result) SkippedJudges() []string {
	var out []string
	for _, t := range r.Turns {
		if t.Judge != nil && t.Judge.Skipped {
			out = append(out, fmt.Sprintf("turn %d: %s", t.Turn, t.Judge.Criterion))
		}
	}
	return out
}

// TurnResult is what one turn came to.
type TurnResult struct {
	// Turn is the turn's number, from 1.
	Turn int
	Say  string
	// Transcript is what the engine heard of an audio turn.
	Transcript string
	// Events are the turn's events, compact and without ids: "speak …", "widget TYPE {…}",
	// "status TOOL …", "error CODE: …", "done", then the tool calls ("tool NAME {args}",
	// "proposed NAME {args}") and the confirm step's outcome.
	Events []string
	// ToolCalls are the calls the tenant's backend received during the turn, then the actions
	// it proposed.
	ToolCalls []ToolCall
	Spec      *widgets.Spec
	Speech    string
	Locale    string
	// Error is the code of the turn's error event, or of the problem that kept it from
	// starting; "" when it answered.
	Error        string
	ErrorMessage string
	// Latency is the time to the done event.
	Latency  time.Duration
	Confirm  *ConfirmResult
	Judge    *Verdict
	Failures []*Failure
	// modelSaw is what the model received during the turn, one request a string: never
	// reported, for it may hold what the turn hid from the model's provider.
	modelSaw []string
}

// ConfirmResult is what a confirm step came to.
type ConfirmResult struct {
	Method string `json:"method"`
	// Status is done, declined or failed.
	Status string `json:"status"`
	// Error is the problem code of a failed execute.
	Error        string `json:"error,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
	Speech       string `json:"speech"`
	// Card is the result card's title and lines.
	Card string `json:"card"`
}

func (c *ConfirmResult) describe() string {
	if c.Error != "" {
		return c.Status + " (" + c.Error + ": " + c.ErrorMessage + ")"
	}
	return c.Status + " " + quote(c.Card) + " speak " + quote(c.Speech)
}

// Verdict is a judge's verdict on a criterion.
type Verdict struct {
	Criterion string `json:"criterion"`
	Pass      bool   `json:"pass"`
	Reason    string `json:"reason,omitempty"`
	// Skipped: no judge was configured.
	Skipped bool `json:"skipped,omitempty"`
}

// Failure is an expectation that did not hold.
type Failure struct {
	// Turn is the turn's number, from 1; 0 for the scenario as a whole.
	Turn int
	Say  string
	// Field is the key of the expectation, such as confirm.amount.
	Field    string
	Expected string
	Got      string
}

// Message says what failed: the scenario, the turn and its say, the field, what was expected
// and what came.
func (f *Failure) Message(s *Scenario) string {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario %q", s.Name)
	if f.Turn > 0 {
		fmt.Fprintf(&b, ", turn %d (%s)", f.Turn, quote(f.Say))
	}
	fmt.Fprintf(&b, ": %s: expected %s, got %s", f.Field, f.Expected, f.Got)
	return b.String()
}

func (tr *TurnResult) fail(field, expected, got string) {
	tr.Failures = append(tr.Failures, &Failure{Field: field, Expected: expected, Got: got})
}

// quote writes s as a Go string, short.
func quote(s string) string {
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strconv.Quote(s)
}

// compactWidget is a widget's JSON without what differs between runs: a confirm's id, token
// and expiry.
func compactWidget(w widgets.Widget) json.RawMessage {
	data, err := engine.Event{Type: engine.EventWidget, Widget: w}.Data()
	if err != nil {
		return json.RawMessage(`{}`)
	}
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return data
	}
	delete(m, "id")
	delete(m, "expiresAt")
	if x, ok := m["execute"].(map[string]any); ok {
		delete(x, "token")
	}
	out, _ := json.Marshal(m)
	return out
}
