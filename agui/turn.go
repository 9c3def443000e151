package agui

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
)

// turn runs the turn of in and streams it as one AG-UI run. A turn the engine refuses before
// its start is answered with the engine's problem, as POST /engine answers it.
func (h *handler) turn(w http.ResponseWriter, r *http.Request, caller *engine.Caller, in *runInput) {
	ti, p := in.turnInput()
	if p != nil {
		p.RequestID = caller.RequestID
		engine.WriteProblem(w, p)
		return
	}
	s := newStream(w, *in.ThreadID, *in.RunID)
	var (
		interrupts []interrupt
		failure    *engine.TurnError
	)
	var (
		done   *widgets.Spec // the turn's spec, when the run follows what comes after it
		result json.RawMessage
	)
turn:
	for ev, err := range h.eng.Turn(r.Context(), caller, ti) {
		if err != nil {
			if !s.started {
				engine.WriteProblem(w, err)
				return
			}
			var p *engine.Problem
			if errors.As(err, &p) {
				s.failed(p.Code, p.Detail)
			} else {
				s.failed(engine.CodeInternal, "the turn failed")
			}
			return
		}
		ok := true
		switch ev.Type {
		case engine.EventStart:
			ok = s.runStarted(map[string]any{"turnId": ev.TurnID, "conversationId": ev.ConversationID})
			if ok && ev.Disclosure != "" {
				data, _ := json.Marshal(map[string]string{"text": ev.Disclosure})
				ok = s.custom(CustomDisclosure, data)
			}
		case engine.EventStatus:
			data, _ := ev.Data()
			ok = s.custom(CustomStatus, data)
		case engine.EventSpeak:
			ok = s.text(ev.Delta)
		case engine.EventWidget:
			data, err := ev.Data()
			if err != nil {
				continue
			}
			ok = s.custom(CustomWidget, data)
			if c, isConfirm := confirmOf(ev.Widget); isConfirm {
				interrupts = append(interrupts, confirmInterrupt(c, data))
			}
		case engine.EventError:
			failure = ev.Error // the apology follows, as text; the run ends with RUN_ERROR
		case engine.EventDone:
			if failure != nil {
				s.failed(failure.Code, failure.Message)
				return
			}
			spec, _ := ev.Data()
			if h.follow == nil || len(interrupts) > 0 || ev.Spec == nil {
				s.finished(spec, interrupts)
				return
			}
			done, result = ev.Spec, spec
			break turn
		}
		if !ok {
			return // the client is gone: leaving the loop stops the turn
		}
	}
	// The turn is over, its slot given back, before the run follows what comes after it.
	if done != nil && h.followed(r, caller, s, done) {
		s.finished(result, nil)
	}
}

// followed streams what Follow yields after the run's turn; false when the client is gone.
func (h *handler) followed(r *http.Request, caller *engine.Caller, s *stream, spec *widgets.Spec) bool {
	for p := range h.follow(r.Context(), caller, spec) {
		data, err := json.Marshal(p)
		if err != nil {
			continue
		}
		if !s.endText() || !s.custom(CustomSpec, data) {
			return false
		}
		for _, w := range p.Widgets {
			if wd, err := json.Marshal(w); err == nil && !s.custom(CustomWidget, wd) {
				return false
			}
		}
		if !s.text(p.Speak) || !s.endText() {
			return false
		}
	}
	return !s.broken
}

// confirmInterrupt is the interrupt a confirm widget ends the run with. Its id carries the
// widget's execute object, so that a resume needs nothing the server kept; the action token
// inside binds the tool, the arguments, the user and the session, so an edited id is refused.
func confirmInterrupt(c widgets.Confirm, widget json.RawMessage) interrupt {
	it := interrupt{
		ID:             interruptID(c.Execute),
		Reason:         ReasonConfirm,
		Message:        c.Title,
		ResponseSchema: resumeSchema,
		Metadata:       map[string]any{"widget": widget},
	}
	if c.Body != "" {
		it.Message = c.Title + ": " + c.Body
	}
	if !c.ExpiresAt.IsZero() {
		it.ExpiresAt = c.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return it
}
