package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/convengine/engine/client"
	"github.com/convengine/engine/widgets"
)

// executeMode runs confirmed actions (POST /engine/execute). Every action runs once, each for
// its own end user (the configured token with a suffix unique to the run) so that the demo bank
// does not run out of money and its ledger tells each action apart. Alone, the workers ask for
// the confirm widgets they will execute before the measured phase (turns such as the demo's
// "send 20 dollars to Alex"), and only the executes are measured. Beside other phases (lazy),
// a worker asks for each widget just before executing it, as an app does, so that no widget
// outlives its action token in a long run; the execute alone is timed.
//
// Every fourth action is executed twice, as an app retrying a lost answer would: the second
// answer must repeat the first. Each outcome goes to the run's ledger, which -bank checks
// against the bank's own record.
type executeMode struct {
	cfg    *config
	lazy   bool
	ledger *ledger
}

func (m *executeMode) describe() string {
	return "an execute (POST /engine/execute) of a confirm widget"
}

// pending is a confirm widget waiting to be executed, with the user it was asked for.
type pending struct {
	exec  widgets.Execute
	token string
}

func (m *executeMode) worker(ctx context.Context, t *target, s slot) (worker, error) {
	c, err := m.cfg.newClient(t)
	if err != nil {
		return nil, err
	}
	if err := m.cfg.startSession(ctx, c); err != nil {
		return nil, err
	}
	ew := &executeWorker{m: m, c: c, index: s.index}
	if m.lazy {
		return ew, nil
	}
	ops := s.ops
	if ops == 0 {
		ops = share(m.cfg.pool, s.count, s.index)
	}
	for range ops + s.warmup {
		p, err := ew.ask(ctx)
		if err != nil {
			return nil, err
		}
		ew.queue = append(ew.queue, p)
	}
	return ew, nil
}

type executeWorker struct {
	m     *executeMode
	c     *client.Client
	index int
	asked int
	queue []pending
}

// ask runs the turn that asks for a confirm widget, for a new end user.
func (w *executeWorker) ask(ctx context.Context) (pending, error) {
	cfg := w.m.cfg
	token := cfg.token + "." + cfg.runID + "." + strconv.Itoa(w.index) + "." + strconv.Itoa(w.asked)
	w.asked++
	stream, err := w.c.Turn(withUserToken(ctx, token), &client.TurnRequest{Transcript: cfg.actionSay})
	if err != nil {
		return pending{}, fmt.Errorf("asking for a confirm widget: %w", err)
	}
	spec, err := stream.Spec()
	stream.Close()
	if err != nil {
		return pending{}, fmt.Errorf("asking for a confirm widget: %w", err)
	}
	for _, wd := range spec.Widgets {
		if cf, ok := wd.(widgets.Confirm); ok {
			return pending{cf.Execute, token}, nil
		}
	}
	return pending{}, fmt.Errorf("the turn %q gave no confirm widget (it answered %q); -action-say must ask for an action", cfg.actionSay, spec.Speak)
}

func (w *executeWorker) do(ctx context.Context, start time.Time) (sample, error) {
	if len(w.queue) == 0 && !w.m.lazy {
		return sample{}, errExhausted
	}
	var p pending
	if w.m.lazy {
		var err error
		if p, err = w.ask(ctx); err != nil {
			if ctx.Err() != nil {
				return sample{}, nil // the run ended during the turn
			}
			return sample{total: time.Since(start), code: "ask_" + errorCode(err)}, nil
		}
		start = time.Now()
	} else {
		p = w.queue[0]
		w.queue = w.queue[1:]
	}
	uctx := withUserToken(ctx, p.token)
	auth := client.Auth{Method: client.AuthFaceID, VerifiedAt: time.Now()}
	res, err := w.c.Execute(uctx, p.exec, auth, nil)
	s := sample{total: time.Since(start)}
	switch {
	case err != nil:
		s.code = errorCode(err)
		w.m.ledger.note(p.token, outcomeUnknown)
		return s, nil
	case res.Done.Type != "success":
		s.code = "declined"
		w.m.ledger.note(p.token, outcomeDeclined)
	default:
		w.m.ledger.note(p.token, outcomeExecuted)
	}
	if w.asked%4 == 0 {
		again, err := w.c.Execute(uctx, p.exec, auth, nil)
		switch {
		case err != nil && ctx.Err() == nil:
			s.code = "replay_" + errorCode(err)
		case err == nil && *again != *res:
			s.code = "replay_differs"
		}
	}
	return s, nil
}
