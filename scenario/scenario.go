package scenario

import (
	"math/big"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode"
)

// Scenario is one scripted conversation with a tenant and what must hold at each turn.
type Scenario struct {
	// Name is unique within a run.
	Name string
	// Tenant is the engine key of the tenant.
	Tenant string
	// Environment is engine.EnvProduction (the default) or engine.EnvStaging.
	Environment string
	// User is the user's token for the tenant's backend (X-Token).
	User string
	// Locale is the default locale of the turns; empty means the tenant's.
	Locale string
	// Voice is the synthesizer's voice that speaks the spoken turns which name none.
	Voice string
	// Tags are free labels, for filters and reports.
	Tags []string
	// Turns run in order, in one conversation.
	Turns []*Turn

	// File and Line are where the scenario starts.
	File string
	Line int
}

// Turn is one thing the user says and what must hold of the answer.
type Turn struct {
	// Say is what the user says.
	Say string
	// Audio makes the turn speech: Say spoken by the engine's synthesizer in Voice, sent as
	// 16 kHz samples, and transcribed by the engine's transcriber.
	Audio bool
	// Voice is the voice of the engine's synthesizer that speaks a spoken turn ("kal16" of
	// flite, "en-us" of espeak-ng); the scenario's when the turn names none. A spoken turn
	// must have one: what a recogniser hears depends on the voice, so a scenario that passes
	// with one synthesizer need not pass with another.
	Voice string
	// Locale is this turn's locale; empty means the scenario's.
	Locale string
	Expect Expect
	// Confirm, when set, executes the turn's confirm widget after the turn.
	Confirm *ConfirmStep

	Line int
}

// Expect is what must hold of a turn. A nil or zero field is not checked, except Error and
// NoAction, whose defaults always apply.
type Expect struct {
	// Tools must all have been called, in any order; others may have been too.
	Tools []string
	// NoTools: no tool was called.
	NoTools bool
	// ToolCalls must each match a call of the turn.
	ToolCalls []ToolCallExpect
	// Widgets are the widget types of the answer, exactly, in order; nil is not checked, an
	// empty list means none.
	Widgets []string
	// WidgetsContain must each be a JSON subset of a widget of the answer.
	WidgetsContain []map[string]any
	// Confirm checks the confirm widget's amount, currency and payee.
	Confirm *ConfirmExpect
	// NoAction: no confirm widget. Default true unless Confirm is set, Widgets lists confirm,
	// or the turn has a confirm step.
	NoAction bool
	// SpeechContains and SpeechNotContains are case-insensitive substrings of the turn's speech.
	SpeechContains    []string
	SpeechNotContains []string
	// ModelNotContains are strings that no request the model received during the turn holds
	// (its prompt, messages and tool calls), compared without case, blanks or dashes: a
	// tenant's privacy policy checked from outside ("4111 1111 1111 1111" also finds
	// "4111111111111111"). A failure never quotes the request.
	ModelNotContains []string
	// SpeechMatches is an RE2 pattern the speech matches.
	SpeechMatches *regexp.Regexp
	// Language is the language the spec's meta.locale starts with.
	Language string
	// Error is the code of the error the turn must end with; "" means none.
	Error string
	// MaxLatency bounds the time to the done event; 0 is no bound.
	MaxLatency time.Duration
	// Judge is a free-text criterion for a judge model.
	Judge string

	// lines are the lines of the keys, for messages.
	lines map[string]int
	// explicitNoAction is no_action as written.
	explicitNoAction bool
}

// ToolCallExpect is a tool call that must have happened.
type ToolCallExpect struct {
	Name string
	// Args are exactly the call's arguments (JSON equality after decoding); nil is not checked.
	Args map[string]any
	// ArgsPartial are arguments the call has, with these values.
	ArgsPartial map[string]any
	// ArgsMatch are arguments whose value, as a string (JSON for what is not a string),
	// matches the pattern.
	ArgsMatch map[string]*regexp.Regexp

	Line int
}

// ConfirmExpect is what the confirm widget's action must be.
type ConfirmExpect struct {
	// Amount is the exact decimal amount, as written ("20.00"); "" is not checked.
	Amount string
	// Currency and Payee are compared exactly; "" is not checked.
	Currency string
	Payee    string

	amount *big.Rat
}

// ConfirmStep executes the turn's confirm widget as a device would after its gate passed.
type ConfirmStep struct {
	// Method is faceid (the default), touchid or passcode.
	Method string
	Expect ConfirmOutcome

	Line int
}

// ConfirmOutcome is what the executed action must come to.
type ConfirmOutcome struct {
	// Status is done (the action ran), declined (the backend refused it) or failed (the
	// engine answered a problem, or the outcome is unknown); "" means done unless Error is set.
	Status string
	// SpeechContains are case-insensitive substrings of the result's speech and card.
	SpeechContains []string
	// Error is the problem code expected instead of a result.
	Error string
}

// The outcomes of a confirm step.
const (
	StatusDone     = "done"
	StatusDeclined = "declined"
	StatusFailed   = "failed"
)

// TapePath is where the scenario's model traffic is recorded: tapes/SLUG.jsonl in the folder of
// its file, SLUG being its name in lower-case letters and digits joined by '-'.
func (s *Scenario) TapePath() string {
	return filepath.Join(filepath.Dir(s.File), "tapes", Slug(s.Name)+".jsonl")
}

// Slug is name in lower-case letters and digits, the runs of anything else made one '-'.
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	if b.Len() == 0 {
		return "scenario"
	}
	return b.String()
}
