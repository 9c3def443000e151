// Package httptools is an [engine.Toolset] over plain HTTP JSON endpoints: each tool of a tenant
// is one request to the tenant's backend, described in the tenant file.
//
// # Configuration
//
// A tenant's "tools" field holds a JSON array of [Definition] values:
//
//	[{"name": "get_balance",
//	  "description": "Get the balance of one of the user's accounts.",
//	  "parameters": {"type": "object", "properties": {"account": {"type": "string"}}},
//	  "method": "GET", "path": "/balance",
//	  "status": "Checking your balance", "timeout": "5s"},
//	 {"name": "transfer", "method": "POST", "path": "/transfers", "action": true, …}]
//
// [Parse] checks such an array and names the field of every mistake. A [Toolset] parses each
// tenant's tools once and keeps the result as long as the tenant is in use.
//
// # Requests
//
// A call goes to the environment's backend_url followed by the tool's path. GET and DELETE
// send the arguments as query parameters (strings, numbers and booleans only); POST, PUT and
// PATCH send them as a JSON body. Every request carries
//
//	X-Token          the end user's token
//	X-Request-ID     the engine request's id
//	Idempotency-Key  on action calls from the execute endpoint
//	Accept, Content-Type: application/json
//
// and the forwarded headers of the request, which never replace the headers above. The client
// metadata and the engine key never reach a backend.
//
// # Results
//
// A 2xx answer's JSON body is the result (an empty body reads as {}). A 4xx answer is a result
// with IsError set, which the model can explain: its JSON body, or {"error":"http_404",…} when
// it has none. A 408 or 429 answer, a 5xx answer, a network error or a time-out is an error
// wrapping [ErrUnavailable]: the backend could not answer, and the call may be retried. A body
// that is not JSON or is too large is an error wrapping [ErrBadResponse]. Errors name the tool
// and the status, never the token, a forwarded value or the query of the URL.
//
// # A backend that is down
//
// Each backend (its scheme and host) has a breaker in [Options].Breakers: after five calls in
// a row that got no answer, timed out or were answered 5xx, 408 or 429, its tools fail at
// once, as not reached, for a cool-down, instead of each turn waiting the tool's time-out;
// then one call probes it. A read tool's request whose connection could not be made or broke
// before an answer is sent once more, 50 to 150 ms later; an action's never is (the execute
// endpoint's Idempotency-Key is what makes a second try of an action safe).
package httptools
