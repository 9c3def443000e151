package engine

import "encoding/json"

// Privacy keeps the personal data of a turn where it belongs (package pii has one): the
// engine asks it for each turn's [Shield] once the turn's body is read, and passes through the
// Shield what reaches the model, the backend and the user. Turn is called from many
// goroutines at once.
type Privacy interface {
	// Turn returns the Shield of one turn of tenant t; nil means nothing is hidden for t.
	Turn(t *Tenant) Shield
}

// A Shield holds one turn's mapping of placeholders to values, in memory only: the engine
// never logs or stores it, and drops it with the turn. The engine calls it from the turn's
// goroutine and from those of its tool calls, at once.
//
//   - ToModel is applied to the transcript, the history, the app's context and the data tools'
//     results before the model sees them, and may replace values by placeholders ("[CARD_1]").
//   - Restore is applied to the arguments of each data tool call before the Toolset is called,
//     and of each action call before its confirm token commits to them: it puts the values
//     back. An error (a placeholder never issued) is the call's error result, which the model
//     sees; the backend is not called.
//   - ToUser is applied to the speech, the widgets' fields and the transcript echoed to the
//     client, and masks placeholders and values ("•••• 1111"). The engine holds back an
//     unfinished "[…" or run of digits at the end of a speech delta until it is complete.
type Shield interface {
	ToModel(text string) string
	Restore(args json.RawMessage) (json.RawMessage, error)
	ToUser(text string) string
	// Handled returns what the Shield has handled so far, for the audit of the turn
	// ([TurnEvent].PersonalData): counts by kind and destination, never a value.
	Handled() []PersonalData
}

// PersonalData counts the values of one kind ("card", "iban"…) that a turn's Shield handled
// in one place: "model" (hidden from the model), "user" (masked), "backend" (put back in a
// tool call) or "refused" (a placeholder never given).
type PersonalData struct {
	Kind, Where string
	N           int
}
