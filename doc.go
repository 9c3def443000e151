// Package engine runs an assistant's conversational turns for many tenants: a user types or
// speaks, and the engine answers with a render spec — text to be heard, then widgets to draw,
// then a final done event — streamed over server-sent events, or over a live voice WebSocket
// with the answer's audio coming back sentence by sentence. It calls each tenant's backend
// tools with the end user's token, turns risky actions into confirm widgets that run only after
// the device's check, and synthesizes speech as WAV.
//
// The examples are the best way in: [New] builds an engine and serves one turn, and
// [Engine.TurnHandler] mounts it on a host's router.
//
// # What a host provides
//
// An [Engine] is made of a [Config]. Three parts are required:
//
//   - a [TenantStore], which finds the [Tenant] (prompt, voice, theme, backends, action
//     allow-list, limits) of each request's engine key; [StaticTenants] serves a fixed set;
//   - a [Model], which streams one completion (package openai for OpenAI and compatible
//     servers, package intent for an offline rule-based model);
//   - a signing key, from which the engine derives the keys of its session and action tokens.
//
// The other parts are optional: a [Toolset] reaches the tenants' backends (packages httptools,
// mcptools, and gotools for Go functions); a [Synthesizer] and a [Transcriber] speak and hear
// (packages espeak, sphinx and openai); a [SessionStore], [ReplayStore], [ActionStore] and
// [RateLimiter] hold what replicas share ([MemoryStore] and [MemoryRateLimiter] for one
// replica, package redisstore for many); an [Observer] watches (package otel). Optional capabilities are small interfaces found
// by type assertion: [Warmer], [VoiceChooser], [TenantTranscriber], [Pinger].
//
// # The handlers
//
// [Engine.Handler] serves every route at its path; each endpoint also has a handler of its
// own, to mount behind the host's middleware:
//
//	POST /api/v1/create-session  Engine.SessionHandler  a session, optionally bound to a device key
//	POST /engine                 Engine.TurnHandler     a turn, streamed as server-sent events
//	POST /engine/execute         Engine.ExecuteHandler  a confirmed action, run at most once
//	POST /engine/tts             Engine.TTSHandler      text spoken as a streamed WAV
//
// [Engine.HealthHandler] answers probes. Every error is an RFC 9457 [Problem] with a stable
// code. A host that shuts down calls [Engine.Shutdown], which tells the transports (the voice
// sockets) to go, and [Engine.Close] to end background work.
//
// # Transports and capabilities
//
// This package is the engine's API, its contracts and the turn core. What speaks another wire
// protocol is a package of its own, built on the exported API ([Engine.Turn], [Engine.Execute],
// [Engine.Synthesize], [Engine.CreateSession]) and the few hooks a transport needs
// ([Engine.CallerFromRequest], [Engine.Route], [Engine.Admit], [Engine.OnShutdown], tickets):
// package voice serves the live voice socket (GET /engine/stream), package agui the AG-UI
// protocol; [Engine.Handler] mounts a transport's routes beside the engine's.
//
// # The life of a turn
//
// A request's common headers are checked first: the request id (whose prod- or stg- prefix
// picks the tenant's environment), the engine key, the end user's token, the session and its
// DPoP proof when the session is bound to a device, the client metadata, and the forwarded
// headers meant for the tenant's backend. Then the tenant's and the user's rate limits, and a
// slot among the turns the process runs at once. Audio input is decoded and transcribed before
// anything is streamed.
//
// The model then streams; its text goes out at once as speak events. Calls of the tenant's
// data tools run in parallel through the Toolset, with the user's token, each with its own
// time-out, and their results go back to the model, up to the tenant's step limit. Calls of
// the engine's UI tools become widgets. A call of an action tool is never run during a turn:
// it becomes a confirm widget carrying a signed token bound to the tenant, session, tool and
// exact arguments, which the execute endpoint runs once the user confirmed on the device.
// When the model is done, the widgets are sent, then done with the assembled spec.
//
// A client that goes away before the turn's start event (while its body is read, its audio
// transcribed or its tools listed) cancels the turn, with or without a [TurnLog]: what is under
// way stops, the model and the tools get a cancelled context, no done is sent, and nothing is
// kept to resume. Without a TurnLog (Config.TurnLog), a client that goes away after the start
// event cancels the model and the tool calls too, and no done follows. With one, the start
// event's resumable member says whether the log keeps the turn: a kept turn runs to its end
// without its client, bounded by its deadline, and GET /engine/turns/{id} replays its events
// after Last-Event-ID, on any replica, until Config.ResumeFor after its end; a turn the log
// refused (it was full) is cancelled by the first write to its stream that fails, a keep-alive
// ping's included. [Engine.Turn] stops when its caller leaves the loop or cancels ctx. A
// confirmed action that has reached its backend always runs to its end, whoever goes away.
//
// The voice socket (package voice) runs the same turns through [Engine.Turn], from the
// utterance's samples, and synthesizes the answer sentence by sentence while the model is still
// writing.
//
// # Testing
//
// Package enginetest has conformance suites for Model, Toolset, store and rate limiter
// implementations, a scripted model, a replay server of recorded model traffic, and the demo
// engine the project's own tests run. Package client is a Go client of every endpoint.
// The examples directory holds a host that embeds the engine (examples/embed), the same on
// chi (examples/chi), the demo bank backend (examples/demobank) and a web client
// (examples/web); cmd/engine is the reference server.
package engine
