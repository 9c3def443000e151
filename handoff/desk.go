package handoff

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/convengine/engine"
)

// Desk is the contact centre of the switchboard's own desk (the reference server's demo desk
// at /demo/desk/): its queue is the switchboard's store, so that starting, relaying and ending
// need nothing more, and a person answers through [Switchboard.DeskHandler].
type Desk struct{}

// Start implements [Handoff]: the handoff waits in the store.
func (Desk) Start(context.Context, *Request) error { return nil }

// Send implements [Handoff]: the desk reads the message from the handoff's events.
func (Desk) Send(context.Context, *Message) error { return nil }

// End implements [Handoff]: the desk sees the handoff's last event.
func (Desk) End(context.Context, string, string) error { return nil }

// DeskHandler serves the desk's API to a person holding key (Authorization: Bearer key):
//
//	GET  handoffs                 the open handoffs of the desk, oldest first, with summaries
//	GET  handoffs/{id}/events     the handoff's events (server-sent events, as the customer's)
//	POST handoffs/{id}/join       {"name"}: the person picks it up
//	POST handoffs/{id}/messages   {"text"}: the person writes
//	POST handoffs/{id}/release    {"note"}: the person gives the conversation back
//
// Mount it under a prefix with http.StripPrefix.
func (s *Switchboard) DeskHandler(key string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /handoffs", func(w http.ResponseWriter, r *http.Request) {
		open, err := s.store.Open(r.Context())
		if err != nil {
			s.storeProblem(w, err)
			return
		}
		out := []*State{}
		for _, st := range open {
			if st.Centre == "desk" {
				out = append(out, st)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("GET /handoffs/{id}/events", s.deskEvents)
	answer := func(typ string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var in struct {
				Name, Text, Note string
			}
			dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<10))
			if err := dec.Decode(&in); err != nil {
				engine.WriteProblem(w, engine.NewProblem(http.StatusBadRequest, engine.CodeInvalidRequest, "the body must be a JSON object"))
				return
			}
			st, err := s.store.Get(r.Context(), r.PathValue("id"))
			if err == nil && st.Centre != "desk" {
				err = ErrNotFound
			}
			if err == nil {
				err = s.Answer(r.Context(), &Answer{Type: typ, ID: st.ID, Agent: in.Name, Text: in.Text, Note: in.Note})
			}
			if err != nil {
				s.storeProblem(w, err)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}
	}
	mux.Handle("POST /handoffs/{id}/join", answer(AgentJoined))
	mux.Handle("POST /handoffs/{id}/messages", answer(AgentMessage))
	mux.Handle("POST /handoffs/{id}/release", answer(Released))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(key)) != 1 {
			engine.WriteProblem(w, engine.NewProblem(http.StatusUnauthorized, CodeBadDeskKey, "the desk key is missing or wrong"))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// CodeBadDeskKey is the problem of a desk request without the desk's key.
const CodeBadDeskKey = "invalid_desk_key"

// deskEvents streams a handoff's events to the desk: every event, the customer's messages
// included, until it ends.
func (s *Switchboard) deskEvents(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	st, err := s.store.Get(ctx, r.PathValue("id"))
	if err != nil || st.Centre != "desk" {
		s.storeProblem(w, cmpErr(err, ErrNotFound))
		return
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	var after int64
	for {
		evs, err := s.store.Events(ctx, st.ID, after, keepAlive)
		if err != nil {
			return
		}
		if len(evs) == 0 {
			if _, err := w.Write([]byte(": ping\n\n")); err != nil {
				return
			}
		}
		over := false
		for _, ev := range evs {
			after = ev.Seq
			b, _ := json.Marshal(ev)
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Type, b); err != nil {
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

var _ Handoff = Desk{}
