// Package enginetest provides deterministic parts for testing code built on the engine: a
// [ScriptedModel] that plays back completions step by step, and a [FuncToolset] whose tools are
// Go functions. They implement the engine's interfaces exactly as real ones must, so they also
// show implementers what the engine expects.
//
// For implementers of a [engine.Model], [TestModel] is a conformance suite, and
// [NewReplayServer] an OpenAI-compatible server that replays recorded responses
// ([OpenAIFixtures]) byte for byte, errors and broken streams included.
package enginetest
