package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/convengine/engine/client"
	"github.com/convengine/engine/widgets"
)

// executeMode runs confirmed actions (POST /engine/execute). Every action runs once: before
// the measured phase, each worker asks for the confirm widgets it will execute with turns such
// as the demo's "send 20 dollars to Alex", each for its own end user (the configured token with
// a suffix) so that the demo bank does not run out of money. Only the executes are measured.
type executeMode struct{ cfg *config }

func (m *executeMode) describe() string {
	return "an execute (POST /engine/execute) of a confirm widget"
}

// pending is a confirm widget waiting to be executed, with the user it was asked for.
type pending struct {
	exec  widgets.Execute
	token string
}

func (m *executeMode) worker(ctx context.Context, t *target, s slot) (worker, error) {
	ops := s.ops
	if ops == 0 {
		ops = share(m.cfg.pool, s.count, s.index)
	}
	ops += s.warmup
	c, err := m.cfg.newClient(t)
	if err != nil {
		return nil, err
	}
	if err := m.cfg.startSession(ctx, c); err != nil {
		return nil, err
	}
	ew := &executeWorker{c: c}
	for i := range ops {
		token := m.cfg.token + "." + strconv.Itoa(s.index) + "." + strconv.Itoa(i)
		tctx := withUserToken(ctx, token)
		stream, err := c.Turn(tctx, &client.TurnRequest{Transcript: m.cfg.actionSay})
		if err != nil {
			return nil, fmt.Errorf("asking for a confirm widget: %w", err)
		}
		spec, err := stream.Spec()
		stream.Close()
		if err != nil {
			return nil, fmt.Errorf("asking for a confirm widget: %w", err)
		}
		var found bool
		for _, wd := range spec.Widgets {
			if cf, ok := wd.(widgets.Confirm); ok {
				ew.queue = append(ew.queue, pending{cf.Execute, token})
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("the turn %q gave no confirm widget (it answered %q); -action-say must ask for an action", m.cfg.actionSay, spec.Speak)
		}
	}
	return ew, nil
}

type executeWorker struct {
	c     *client.Client
	queue []pending
}

func (w *executeWorker) do(ctx context.Context, start time.Time) (sample, error) {
	if len(w.queue) == 0 {
		return sample{}, errExhausted
	}
	p := w.queue[0]
	w.queue = w.queue[1:]
	res, err := w.c.Execute(withUserToken(ctx, p.token), p.exec, client.Auth{Method: client.AuthFaceID, VerifiedAt: time.Now()}, nil)
	s := sample{total: time.Since(start)}
	switch {
	case err != nil:
		s.code = errorCode(err)
	case res.Done.Type != "success":
		s.code = "declined"
	}
	return s, nil
}
