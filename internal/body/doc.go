// Package body holds the JSON bodies of the protocol's requests (POST /engine, POST
// /engine/execute, POST /engine/tts, create-session, and create-session's answer) as Go types,
// and the rules of their fields that need no tenant, session or key: the shape of each value
// and its bounds, in the order docs/protocol.md gives them. A refusal is a [FieldError] naming
// the field, which the root answers 400 invalid_request. The root decides what the values mean
// (whose token, which session, what to run) and when each rule runs among its own checks;
// Engine.Turn's input becomes a turn's body ([Input]) and is checked by the same code.
package body

// FieldError is what is wrong with one field of a body: Field names it as the body does
// ("messages[2].role"), and Detail completes a sentence that starts with it.
type FieldError struct {
	Field  string
	Detail string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Detail }

func bad(field, detail string) *FieldError { return &FieldError{Field: field, Detail: detail} }
