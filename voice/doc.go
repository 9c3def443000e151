// Package voice serves the engine's live voice socket: a WebSocket at GET /engine/stream on
// which a client streams the user's speech (16 kHz PCM in base64 JSON messages) or types, and
// hears each answer as it is written — speak deltas, then audio messages sentence by sentence
// while the model is still writing, then the render spec and done. Its wire protocol is in
// docs/voice.md and docs/asyncapi.yaml.
//
//	sockets, err := voice.New(eng, &voice.Options{OriginPatterns: []string{"app.example.com"}})
//	if err != nil {
//		return err
//	}
//	mux.Handle("/", eng.Handler(sockets.Routes()...))
//
// [New] registers the socket with the engine's Shutdown, which then closes every socket with
// 1012 (service restart: connect again, to another replica) once its running turn is
// answered. [Server.Handler] and [Server.TicketHandler] serve the two routes on their own, for
// a host that mounts each behind its middleware.
//
// # Built on the engine's exported API
//
// The package is a transport: it speaks a wire protocol and runs the engine's turns through
// what package engine exports, as a host's own transport (a telephony bridge) would:
//
//   - who a socket is for: [engine.Engine.CallerFromRequest] for the headers, and for a browser,
//     which cannot set them, a ticket from [engine.Engine.IssueTicket] offered as a
//     subprotocol and opened with [engine.Engine.OpenTicket];
//   - its bounds: the sockets of the process and of each user (Options.MaxSockets,
//     MaxSocketsPerUser) keyed by [engine.Engine.UserKey], the users' audio held before it is
//     transcribed (Options.AudioMemory), each refusal reported by [engine.Engine.Overloaded];
//     each socket admitted once by [engine.Engine.Admit] (its place in the sockets, its ticket
//     spent, the rate limits);
//   - each turn: [engine.Engine.Admit] takes its rate limits and turn slot before anything is
//     done for it, so that a refused utterance is answered at once; [engine.Engine.Turn] runs
//     it from the utterance's samples ([engine.TurnInput].Samples), which it transcribes within
//     the turn's time limit, with the turn id the socket chose ([engine.TurnInput].TurnID);
//   - its speech: an [engine.Speaker] synthesizes each sentence of the answer as soon as the
//     model has written it, in the tenant's voice for the turn's locale.
//
// # One socket
//
// A socket's reader goroutine reads and owns the conversation; each turn runs in a goroutine of
// its own, one at a time; what is to be sent waits in a bounded queue that a writer goroutine,
// running only while the queue holds something, sends in order. An idle socket holds one
// goroutine and no buffer of its own besides the connection's. A user who speaks over an answer
// (for Options.BargeIn, as the engine's speech detector hears it) or sends cancel stops it:
// model, tools and synthesis stop with the turn's context.
package voice
