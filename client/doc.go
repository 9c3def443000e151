// Package client is a Go client of the conversational engine: what a Go app, a command-line
// tool or a test uses to create sessions, run turns, execute confirmed actions and synthesize
// speech. It imports packages widgets and audio to decode what the engine sends, never the
// engine itself.
//
// # Sessions
//
// [Client.CreateSession] creates a session; the client keeps it and sends its token on every
// later request. With [SessionOptions.Bind] the session is bound to a device key (RFC 9449,
// DPoP): the client generates an ES256 key, keeps its private half in memory only, and signs a
// proof for every request. A key of a platform key store can be used instead through
// [SessionOptions.Key].
//
// The client follows the engine's retry rules and never loops: an answer 401 use_dpop_nonce
// retries once with the nonce the engine sent; any other 401 of a key-bound session (such as
// invalid_session or invalid_dpop_proof), and 401 invalid_session of an unbound one, re-creates
// the session (with the same device key) and retries the request once. Every other failure is returned as
// an [*Error] carrying the engine's problem.
//
// # Turns
//
// [Client.Turn] starts a turn and returns a [TurnStream]. Range over [TurnStream.Events] for the
// typed events as they arrive ([*SpeakEvent] deltas first, so that speech can start), or call
// [TurnStream.Spec] for the assembled render spec.
//
// # Voice
//
// [Client.Stream] opens the live voice socket (WebSocket /engine/stream) with the same headers,
// session and retry rules, and returns a [Stream]. [Stream.SendAudio] sends the user's speech
// (16-bit PCM, 16 kHz, mono) and [Stream.EndOfSpeech] ends the utterance, or [Stream.SendWAV]
// sends a recording at any sample rate (package audio decodes and resamples it); [Stream.SendText]
// sends a typed turn and [Stream.Cancel] stops the answer. Range over [Stream.Events] for the
// answer: a [*TranscriptEvent], [*SpeakEvent] deltas and [*AudioEvent] PCM interleaved, a
// [*SpecEvent], then a [*DoneEvent]. Keep reading while the socket is open.
//
// The examples are the best way in.
package client
