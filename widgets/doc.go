// Package widgets defines the render spec that the engine streams to clients and the widgets a
// client draws: [Stat], [List], [Progress] and [Confirm].
//
// Clients import this package to decode what the engine sends; the engine uses it to validate
// what a model produced before anything reaches a client. Every widget round-trips through JSON
// with its "type" field, and [Decode] turns one JSON object back into the right Go type. A type
// this version does not know decodes to [Unknown], so that an older client keeps working when a
// newer engine adds widgets.
//
// # Tools a model sees
//
// A model produces widgets by calling the engine's UI tools ([ToolShowStat], [ToolShowList],
// [ToolShowProgress], [ToolSetFollow], [ToolSetSuggestions]). [UITools] lists them with the JSON
// schemas of their arguments.
package widgets
