package telephony

import (
	"context"

	"github.com/convengine/engine"
)

// Names of the calls' bounds in [engine.OverloadEvent]: "calls", "tenant_calls" and
// "user_calls" (one calling number's, or one verified user's).
const BoundCalls = "calls"

// Calls bounds the calls a transport holds at once: in the process, for one tenant, and for one
// caller. It is safe for concurrent use; one Calls may serve several transports (Twilio and
// SIP), which then share its bounds.
type Calls struct {
	hold    *engine.Hold
	streams *engine.Hold // the calls' utterances heard while spoken: two a call at most
}

// BoundCallStreams names the bounds of the calls' connections to a streaming recogniser, two
// a call at most (an utterance heard while its turn takes the one before), as BoundCalls do.
const BoundCallStreams = "call_recognizer_streams"

// NewCalls returns bounds of at most max calls in the process, perTenant for a tenant and
// perCaller for one calling number (0 or less: no bound).
func NewCalls(max, perTenant, perCaller int) *Calls {
	return &Calls{hold: engine.NewHold(BoundCalls, "calls", max, perTenant, perCaller),
		streams: engine.NewHold(BoundCallStreams, "utterances heard while spoken", 2*max, 2*perTenant, 2*perCaller)}
}

// Admit admits a call to tenant from the number from (E.164, or "anonymous") through the
// engine's admission, before anything is done for it: a place among the bounds, and the
// tenant's rate limits. Until the caller is verified, the call is bounded by its calling number
// (engine.Work.Unverified). The error is a *[engine.Problem]; Release gives the place back.
func (c *Calls) Admit(ctx context.Context, e *engine.Engine, tenant, requestID, from string) (*engine.Admission, error) {
	caller := &engine.Caller{EngineKey: tenant, Environment: engine.EnvProduction, RequestID: requestID}
	return e.Admit(ctx, caller, engine.Work{Kind: engine.WorkConnection, Hold: c.hold, Unverified: "tel:" + from})
}
