// Package agui serves the engine's turns to AG-UI clients: the open agent–user interaction
// protocol of CopilotKit and assistant-ui, version 1.0, as @ag-ui/core 1.0.0 defines it.
//
// [Handler] answers a POST of a RunAgentInput with a text/event-stream of AG-UI events, each
// a "data: {json}" line as @ag-ui/client's HttpAgent reads them. It is built only on the
// engine's in-process API ([engine.Engine.Turn], [engine.Engine.Execute]) and reads who a
// run is for as the engine's handlers do ([engine.Engine.CallerFromRequest]): X-Engine-Key,
// X-Token and X-Request-ID, or the host's [engine.Config].Identify, a session in
// Authorization. A request refused before its run starts is answered with the engine's
// application/problem+json.
//
// # A turn
//
// The last message of RunAgentInput.messages, a user's, is the transcript; the user's and
// the assistant's text messages before it are the turn's history; threadId names the
// conversation. The turn's events become:
//
//   - start: RUN_STARTED, with the turn's id in metadata.turnId;
//   - speak: TEXT_MESSAGE_START (role assistant), TEXT_MESSAGE_CONTENT, ..., TEXT_MESSAGE_END;
//   - widget: CUSTOM named "widget", the widget's JSON as value;
//   - status: CUSTOM named "status";
//   - the tenant's AI disclosure, on a conversation's first run: CUSTOM named "disclosure",
//     {"text": …}, right after RUN_STARTED;
//   - done: RUN_FINISHED, the render spec as result; its outcome is "success", or
//     "interrupt" when the turn has a confirm widget;
//   - error: the apology still streams as text, then RUN_ERROR with the engine's code.
//
// # Confirmations
//
// A confirm widget ends the run as a human-in-the-loop interrupt: RUN_FINISHED with outcome
// {"type": "interrupt", "interrupts": [{"id", "reason": "confirmation_required", "message",
// "expiresAt", "responseSchema", "metadata": {"widget": the confirm}}]}. The interrupt's id is
// "confirm." and the widget's execute object as base64url JSON, so the handler keeps nothing
// between runs; the action token inside binds the tool, the arguments, the user and the
// session, and an edited id is refused as invalid_action_token.
//
// The client answers with a new run whose resume is [{"interruptId", "status": "resolved",
// "payload": {"auth": {...}}}], auth being the execute endpoint's (method, verifiedAt, and
// proof or webauthn when the tenant asks for them). The action runs through
// [engine.Engine.Execute], at most once per token: its card is a CUSTOM "done" event and its
// speech a text message, then RUN_FINISHED; an action the engine refuses is RUN_ERROR with
// its code. An interrupt is answered once: a resume of an action that already ran, on any
// replica that shares the engine's ActionStore ([engine.ExecuteResult].Replayed), is RUN_ERROR
// action_replayed and runs nothing. A proof is checked against verifiedAt as the client wrote
// it. A cancelled resume runs nothing.
//
// docs/agui.md has the whole mapping.
package agui
