package voice

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/convengine/engine/widgets"
)

// Say speaks a render spec that comes from outside the sockets' turns — a person's message
// while the conversation is handed to them (package handoff) — on this process's sockets of a
// user's conversation, as an answer is spoken: a speak message of its text, its audio in the
// tenant's voice for the spec's locale, then the spec message. It is no turn: no transcript
// nor done frames it, and a client tells it by its spec (meta.from "person"). user is
// [engine.Engine.UserKey] of the sockets' caller, conversationID the conversation their turns
// run in. Say blocks while it speaks, until ctx or the socket ends, and returns the number of
// sockets it reached.
func (s *Server) Say(ctx context.Context, tenant, user, conversationID string, spec *widgets.Spec) int {
	if spec == nil || conversationID == "" {
		return 0
	}
	s.streams.mu.Lock()
	var to []*voiceConn
	for c := range s.streams.conns {
		if c.caller.EngineKey == tenant {
			if id := c.conversation.Load(); id != nil && *id == conversationID {
				to = append(to, c)
			}
		}
	}
	s.streams.mu.Unlock()
	n := 0
	for _, c := range to {
		if s.e.UserKey(c.caller) == user && c.say(ctx, spec) {
			n++
		}
	}
	return n
}

// say speaks spec on the socket, as a turn's voice sink speaks an answer.
func (c *voiceConn) say(ctx context.Context, spec *widgets.Spec) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.ctx, cancel)()
	var answered atomic.Bool
	sink := newVoiceSink(ctx, c, "", spec.Meta.Locale, &answered)
	defer sink.close()
	if spec.Speak != "" && sink.Speak(spec.Speak) != nil {
		return false
	}
	if sink.speaker != nil {
		sink.finishWorker()
	}
	b, err := json.Marshal(map[string]any{"type": "spec", "spec": spec})
	return err == nil && c.send(ctx, b)
}
