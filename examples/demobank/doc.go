// Package demobank is a small tenant backend: the bank that the demo tenant's tools call. It
// keeps every user's accounts in memory, seeded the same way for each new user token, so that
// the engine's demo works offline and tests can assert what a tool call did.
//
// [New] returns a [Bank], an [http.Handler] with the endpoints of docs/demobank-contract.md:
//
//	GET  /balance?account=checking|savings
//	GET  /transactions?limit=1..20
//	GET  /goal
//	POST /transfers       {"amount":20,"to":"Alex","currency":"USD"} with an Idempotency-Key
//	GET  /healthz
//
// Every endpoint but /healthz needs an X-Token header; any non-empty value is a user. Answers
// are JSON; errors are {"error":code,"message":text}.
//
// # The demo tenant
//
// [Tenant] returns the demo tenant, keyed [EngineKey], whose tools call a running Bank: its
// tools are [ToolsJSON], definitions in the format of package httptools, and its intents
// (intents.yaml) configure the offline model of package intent.
//
// # Tests
//
// [Bank.Balance] and [Bank.Transfers] let a test check the effect of an action, such as a
// transfer that must run exactly once however often it is retried.
package demobank
