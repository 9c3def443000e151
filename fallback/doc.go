// Package fallback answers a tenant through a chain of models, so that a provider that fails
// does not take the conversation down with it: [New] returns an [engine.Model] that tries its
// models in order, and moves to the next one when a model fails before any of its answer went
// out.
//
// # When the chain moves on
//
// A model is tried once: the chain tells the models it runs not to retry by themselves (the
// openai package's retries give way), since the next model is the better retry. It is abandoned
// for the next one on a failure another model need not share — a connection refused or cut, a
// 5xx or 429 answer, an error the server reports in its stream as its own, a first piece of the
// answer that does not come within [Named].FirstTokenTimeout, a stream that stalls for longer
// than [Named].StallTimeout — as long as nothing of its answer was yielded. Once it yielded
// something (text reaches the user as it comes), a failure ends the turn as with a single model:
// model_error and the apology. A failure that is the request's (a 400, a prompt too long for
// the model) ends the turn too: the next model would refuse it as well.
//
// A 429's Retry-After (or retry-after-ms) keeps the model out of every chain's turns for that
// long instead of making one turn sleep on it.
//
// # Breakers
//
// Each model has a breaker in a [breaker.Set] shared by every chain of the process: after five
// failed attempts in a row the model is skipped for a cool-down, then one turn probes it again.
// When no model of a chain may be tried, the completion fails at once with an
// [*UnavailableError], which wraps [engine.ErrModelUnavailable]: the turn's error event is
// model_unavailable. [BeforeTurn] refuses such a turn before its stream starts instead, with a
// 503 model_unavailable problem and Retry-After.
//
// # What is counted
//
// The finish event names the model that answered and counts in Retries the attempts that
// failed before it; servers bill no usage for a failed attempt. A completion answered by a
// model marked [Named].Degraded (the offline intent model as a last resort) is reported to the
// Observer's Breaker hook with the state "degraded".
package fallback
