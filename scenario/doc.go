// Package scenario runs conversation tests against a tenant before it goes live: scripted
// conversations, written as YAML files, whose turns run in-process on a real [engine.Engine]
// with the tenant's real tools, each turn checked against what must hold (the tools called and
// their arguments, the widgets, a confirm's amount, currency and payee, the speech, the
// language, no error, a latency budget) and, when asked, its confirm widget executed.
//
// # Files
//
// [Load] reads scenario files or folders of them (docs/testing-tenants.md gives the schema).
// Every key is checked: an unknown key, a bad regular expression or duration, an empty say is
// an error that names FILE:LINE, the scenario and the turn, and all of a run's errors are
// reported together.
//
// # Runs
//
// A [Runner] builds an engine for each scenario from [RunnerOptions].Config, so that scenarios
// share no state (the demo bank's users, rate limits, sessions), checks what needs the engine
// (tenants, tools, widget types) before anything runs, then runs scenarios in parallel up to a
// bound. Each turn's events, the tool calls the tenant's backend received (with their
// arguments), the done spec and the error are recorded in a [TurnResult].
//
// # Reports
//
// A [Report] writes a terminal summary ([Report.WriteSummary]), JUnit XML
// ([Report.WriteJUnit]), deterministic but for its time and timestamp attributes, and JSON
// ([Report.WriteJSON]).
package scenario
