package handoff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
)

// keepAlive is how often an idle stream is pinged, and marks its customer present.
const keepAlive = 15 * time.Second

// Routes returns the switchboard's routes for [engine.Engine.Handler]: the contact centres'
// answers, and the customer's stream and messages. Bind first.
func (s *Switchboard) Routes() []engine.Route {
	e := s.engine()
	return []engine.Route{
		{Pattern: "POST " + PathEvents, Handler: e.Route(http.MethodPost, PathEvents, s.EventsHandler())},
		{Pattern: "GET " + PathStream, Handler: e.Route(http.MethodGet, PathStream, http.HandlerFunc(s.serveStream))},
		{Pattern: "POST " + PathMessages, Handler: e.Route(http.MethodPost, PathMessages, http.HandlerFunc(s.serveMessage))},
	}
}

// owned returns the handoff of the request's path if the caller is its customer.
func (s *Switchboard) owned(ctx context.Context, c *engine.Caller, id string) (*State, error) {
	st, err := s.store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if st.Tenant != c.EngineKey || st.User != s.engine().UserKey(c) {
		return nil, ErrNotFound // another's handoff is none of the caller's business
	}
	return st, nil
}

// serveStream is GET /engine/handoff/{id}/events: the handoff's events as server-sent events,
// from Last-Event-ID on, until the handoff ends. Each person's message is a render spec
// marked as theirs (meta.from "person", meta.name).
func (s *Switchboard) serveStream(w http.ResponseWriter, r *http.Request) {
	e := s.engine()
	ctx, stop := s.untilDrain(r.Context())
	defer stop()
	c, err := e.CallerFromRequest(r)
	if err != nil {
		engine.WriteProblem(w, err)
		return
	}
	a, err := e.Admit(ctx, c, engine.Work{Kind: engine.WorkConnection, Hold: s.streams})
	if err != nil {
		engine.WriteProblem(w, err)
		return
	}
	defer a.Release()
	st, err := s.owned(ctx, c, r.PathValue("id"))
	if err != nil {
		s.storeProblem(w, err)
		return
	}
	var after int64
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			engine.WriteProblem(w, engine.InvalidField("Last-Event-ID", "must be the number of an event"))
			return
		}
	}
	flusher, _ := w.(http.Flusher)
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	for {
		evs, err := s.store.Events(ctx, st.ID, after, keepAlive)
		if err != nil {
			return
		}
		_ = rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if len(evs) == 0 {
			s.seen(ctx, st.ID)
			if _, err := w.Write([]byte(": ping\n\n")); err != nil {
				return
			}
		}
		over := false
		for _, ev := range evs {
			after = ev.Seq
			if ev.Type == "message" && ev.From == "user" {
				continue // the customer's own words are on their screen already
			}
			name, data := streamData(st, &ev)
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, name, data); err != nil {
				return
			}
			over = over || (ev.Type == "handoff" && !ev.Status.Open())
		}
		if flusher != nil {
			flusher.Flush()
		}
		if over {
			return
		}
	}
}

// streamData is an event as the customer's stream carries it: "handoff" {id, status, agent,
// speak}, or "message", a render spec.
func streamData(st *State, ev *Event) (string, []byte) {
	if ev.Type == "message" {
		spec := widgets.Spec{Speak: ev.Text, Meta: widgets.Meta{ConversationID: st.ConversationID, Locale: st.Locale,
			Direction: engine.Direction(st.Locale), From: "person", Name: ev.Agent}}
		b, _ := json.Marshal(spec)
		return "message", b
	}
	b, _ := json.Marshal(map[string]string{"id": st.ID, "status": string(ev.Status), "agent": ev.Agent, "speak": ev.Text})
	return "handoff", b
}

// serveMessage is POST /engine/handoff/{id}/messages, {"text": …}: the customer writes to the
// person. It is admitted as a relay (the rate limits, no model's budget); 202 once passed on.
func (s *Switchboard) serveMessage(w http.ResponseWriter, r *http.Request) {
	e := s.engine()
	ctx, stop := s.untilDrain(r.Context())
	defer stop()
	c, err := e.CallerFromRequest(r)
	if err != nil {
		engine.WriteProblem(w, err)
		return
	}
	a, err := e.Admit(ctx, c, engine.Work{Kind: engine.WorkRelay})
	if err != nil {
		engine.WriteProblem(w, err)
		return
	}
	defer a.Release()
	var body struct {
		Text string `json:"text"`
	}
	if err := e.DecodeBody(w, r, false, &body); err != nil {
		engine.WriteProblem(w, err)
		return
	}
	if body.Text == "" || len(body.Text) > 8000 {
		engine.WriteProblem(w, engine.InvalidField("text", "must be 1 to 8000 bytes"))
		return
	}
	st, err := s.owned(ctx, c, r.PathValue("id"))
	if err == nil && !st.Status.Open() {
		err = ErrEnded
	}
	if err == nil {
		err = s.Relay(ctx, st, body.Text)
	}
	if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrEnded) {
		engine.WriteProblem(w, engine.NewProblem(http.StatusBadGateway, CodeCentreUnreachable, "the person could not be reached; the assistant takes the conversation back"))
		return
	}
	if err != nil {
		s.storeProblem(w, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// CodeCentreUnreachable is the problem of a message that did not reach the contact centre.
const CodeCentreUnreachable = "centre_unreachable"
