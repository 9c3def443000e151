package handoff

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
)

// Push and Follow bring a handoff to customers on channels without a stream of their own: the
// voice socket, whose reader owns the socket and hears specs pushed to it (voice.Server.Say),
// and an AG-UI run, which stays open while the handoff does ([Switchboard.Follow]). Both carry
// the same specs: each person's message as a render spec marked meta.from "person" with their
// name, and each change of status (connected, released, failed) as a spec that says it, with
// the handoff widget.

// pushSpec is a handoff's event as the channels without a stream carry it; nil for the events
// they do not (the queued status the turn said already, the customer's own words).
func pushSpec(st *State, ev *Event) *widgets.Spec {
	meta := widgets.Meta{ConversationID: st.ConversationID, Locale: st.Locale, Direction: engine.Direction(st.Locale)}
	switch {
	case ev.Type == "message" && ev.From == "person":
		meta.From, meta.Name = "person", ev.Agent
		return &widgets.Spec{Speak: ev.Text, Meta: meta}
	case ev.Type == "handoff" && ev.Status != StatusQueued:
		fields, _ := json.Marshal(map[string]string{"id": st.ID, "status": string(ev.Status), "agent": ev.Agent})
		return &widgets.Spec{Speak: ev.Text, Widgets: []widgets.Widget{widgets.Custom{Type: WidgetType, Fields: fields}}, Meta: meta}
	}
	return nil
}

// events yields the events of handoff id after seq after, until it ends, ctx ends, or the
// handoff is gone. A store that fails is tried again each Tick.
func (s *Switchboard) events(ctx context.Context, id string) iter.Seq[*Event] {
	return func(yield func(*Event) bool) {
		var after int64
		for ctx.Err() == nil {
			evs, err := s.store.Events(ctx, id, after, keepAlive)
			if errors.Is(err, ErrNotFound) {
				return
			}
			if err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(s.o.Tick):
				}
				continue
			}
			if len(evs) == 0 {
				if st, err := s.store.Get(ctx, id); errors.Is(err, ErrNotFound) || (err == nil && !st.Status.Open()) {
					return // ended, and its last events are gone
				}
			}
			for i := range evs {
				ev := &evs[i]
				after = ev.Seq
				if !yield(ev) || (ev.Type == "handoff" && !ev.Status.Open()) {
					return
				}
			}
		}
	}
}

// push delivers a handoff's events to Options.Push on the replica that started it, until the
// handoff ends or the switchboard closes.
func (s *Switchboard) push(ctx context.Context, st *State) {
	for ev := range s.events(ctx, st.ID) {
		if spec := pushSpec(st, ev); spec != nil {
			s.o.Push(ctx, st, spec)
		}
	}
}

// Follow yields what a handoff brings to the customer after the turn whose spec is given: the
// specs of docs/handoff.md (each person's message, each change of status), until the handoff
// ends or ctx does. It yields nothing when the spec has no handoff widget or the handoff is
// not the caller's. AG-UI runs follow with it (agui.Options.Follow): a run that hands the
// conversation to a person stays open while the handoff does.
func (s *Switchboard) Follow(ctx context.Context, c *engine.Caller, spec *widgets.Spec) iter.Seq[*widgets.Spec] {
	return func(yield func(*widgets.Spec) bool) {
		id := widgetID(spec)
		if id == "" || s.engine() == nil {
			return
		}
		ctx, stop := s.untilDrain(ctx)
		defer stop()
		st, err := s.owned(ctx, c, id)
		if err != nil {
			return
		}
		for ev := range s.events(ctx, st.ID) {
			if p := pushSpec(st, ev); p != nil && !yield(p) {
				return
			}
		}
	}
}

// widgetID is the id of the handoff widget of spec, "" for none.
func widgetID(spec *widgets.Spec) string {
	if spec == nil {
		return ""
	}
	for _, w := range spec.Widgets {
		if w.WidgetType() != WidgetType {
			continue
		}
		b, err := json.Marshal(w)
		if err != nil {
			continue
		}
		var f struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(b, &f) == nil && f.ID != "" {
			return f.ID
		}
	}
	return ""
}
