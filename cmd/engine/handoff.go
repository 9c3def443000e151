package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"

	"github.com/convengine/engine"
	"github.com/convengine/engine/handoff"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/pii"
	"github.com/convengine/engine/record"
	"github.com/convengine/engine/widgets"
)

// newSwitchboard hands conversations to people: tenants with a "handoff" object to theirs; the
// demo tenants to the demo desk at /demo/desk/, or to -handoff-webhook when it is set. The
// desk's key, which the desk page asks for, is made at each start and printed on the console.
// A language model writes the summaries a person opens on, when there is one; the handoffs go
// to the conversation record with the turns, when there is one.
func newSwitchboard(opts options, tenants engine.TenantStore, privacy *pii.Privacy, chosen models, demo bool, records *record.Recorder,
	push func(context.Context, *handoff.State, *widgets.Spec), shared stores, log *slog.Logger) (*handoff.Switchboard, string, error) {
	o := &handoff.Options{Tenants: tenants, Privacy: privacy, Desk: handoff.Desk{}, Push: push, Logger: log}
	shared.handoffs(o)
	if records != nil {
		o.Recorder = records
	}
	switch {
	case opts.handoffWebhook != "":
		o.Default = &handoff.Config{Webhook: opts.handoffWebhook, Secret: opts.handoffSecret}
	case demo:
		o.Default = &handoff.Config{Desk: true}
	}
	if _, offline := chosen.model.(*intent.Model); !offline && chosen.model != nil {
		o.Summarize = handoff.ModelSummary(chosen.model)
	}
	sb, err := handoff.New(o)
	if err != nil {
		return nil, "", err
	}
	key := make([]byte, 16)
	rand.Read(key)
	return sb, "desk_" + hex.EncodeToString(key), nil
}
