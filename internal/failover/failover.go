// Package failover carries what a fallback chain (package fallback) tells the models it runs,
// through their context: that each is tried once, since the chain tries the next model rather
// than the same one again, and a heartbeat for each piece of an answer a model reads, so that the
// chain tells a stalled stream from one still writing a long tool call it has not yielded yet.
// The openai package reads both.
package failover

import "context"

type key struct{}

// With returns ctx for one try of a model in a chain; beat is called for each piece of the
// answer the model reads, from the model's goroutine.
func With(ctx context.Context, beat func()) context.Context {
	return context.WithValue(ctx, key{}, beat)
}

// Once reports whether ctx is a try of a chain: the model must not retry by itself.
func Once(ctx context.Context) bool {
	_, ok := ctx.Value(key{}).(func())
	return ok
}

// Heartbeat returns the function that tells the chain of ctx that the model read a piece of
// its answer, or nil outside a chain. A model looks it up once per request.
func Heartbeat(ctx context.Context) func() {
	beat, _ := ctx.Value(key{}).(func())
	return beat
}
