package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/convengine/engine"
	"github.com/convengine/engine/client"
	"github.com/convengine/engine/widgets"
)

// What the drill's users say.
const (
	askBalance = "what is my balance"
	askToSend  = "send 5 dollars to Alex"
)

// maxAttempts bounds the attempts of one turn a user wants before the drill counts it failed;
// pause is the wait between two. An action is sent again for up to settleWithin: one whose
// replica died mid-call stays claimed until its lease passes (the tool's time-out, 10 s by
// default, and 30 s), and then runs on another replica with the same idempotency key.
const (
	maxAttempts  = 40
	pause        = 300 * time.Millisecond
	settleWithin = 90 * time.Second
)

// attempt is one try at a turn or an action, as its client saw it.
type attempt struct {
	kind       string // "turn", "voice" or "execute"
	start, end time.Time
	// outcome: "ok"; "resumed" (done after a resume, on the turn's replica), "resumed elsewhere"
	// (on another replica); "lost" (turn_lost: the replica died);
	// "refused:<code>" (a problem before the stream); "error:<code>" (an error event);
	// "network" (no answer); "broken" (the stream ended without done); "closed:<code>" (the
	// voice socket closed mid-turn).
	outcome string
	replica string // the replica that answered the turn's or the action's POST (X-Replica)
	token   string // an action's user, whose ledger entry it is
}

func (a attempt) ok() bool {
	return a.outcome == "ok" || a.outcome == "resumed" || a.outcome == "resumed elsewhere"
}

// tally is what the users did and saw.
type tally struct {
	mu       sync.Mutex
	attempts []attempt
	// wanted and done count what the users wanted done (a turn, an action) and got, by kind.
	wanted, done map[string]int
	ledger       map[string]string
}

func newTally() *tally {
	return &tally{wanted: map[string]int{}, done: map[string]int{}, ledger: map[string]string{}}
}

func (t *tally) add(a attempt) {
	t.mu.Lock()
	t.attempts = append(t.attempts, a)
	t.mu.Unlock()
}

func (t *tally) finish(kind string, ok bool) {
	t.mu.Lock()
	t.wanted[kind]++
	if ok {
		t.done[kind]++
	}
	t.mu.Unlock()
}

// transport records, for one user's client, the replica that answered the last turn's POST and
// the resumes the client made, and where they went. Every cutEvery-th turn's stream breaks
// after its first speak event, as a phone's does when it moves from Wi-Fi to cellular: the
// client resumes it through the balancer, on whichever replica it picks.
type transport struct {
	next     http.RoundTripper
	cutEvery int
	mu       sync.Mutex
	turns    int
	replica  string
	resumes  int
	// elsewhere: a resume of the last turn was answered by another replica than the turn's.
	elsewhere bool
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && (r.URL.Path == engine.PathTurn || r.URL.Path == engine.PathExecute):
		t.replica, t.resumes, t.elsewhere = "", 0, false
		if resp != nil {
			t.replica = resp.Header.Get("X-Replica")
		}
		if r.URL.Path == engine.PathTurn && resp != nil && resp.StatusCode == http.StatusOK {
			if t.turns++; t.cutEvery > 0 && t.turns%t.cutEvery == 0 {
				resp.Body = &cutBody{rc: resp.Body}
			}
		}
	case strings.HasPrefix(r.URL.Path, engine.PathTurns):
		t.resumes++
		if resp != nil && resp.StatusCode == http.StatusOK && resp.Header.Get("X-Replica") != t.replica {
			t.elsewhere = true
		}
	}
	return resp, err
}

func (t *transport) last() (string, int, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.replica, t.resumes, t.elsewhere
}

// cutBody passes a turn stream through up to the end of its first speak event, then breaks.
type cutBody struct {
	rc   io.ReadCloser
	seen []byte
	cut  bool
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.cut {
		return 0, io.ErrUnexpectedEOF
	}
	n, err := b.rc.Read(p)
	start := max(len(b.seen)-len("event: speak\n"), 0)
	b.seen = append(b.seen, p[:n]...)
	if i := bytes.Index(b.seen[start:], []byte("event: speak\n")); i >= 0 {
		if j := bytes.Index(b.seen[start+i:], []byte("\n\n")); j >= 0 {
			end := start + i + j + 2 // in seen
			b.cut = true
			b.rc.Close()
			return max(n-(len(b.seen)-end), 0), nil
		}
	}
	return n, err
}

func (b *cutBody) Close() error { return b.rc.Close() }

// tokenKey carries the user's token in a context: each of the drill's turns is a user of its
// own, so that no user's rate limit shapes the drill.
type tokenKey struct{}

type ctxToken struct{}

func (ctxToken) UserToken(ctx context.Context) (string, error) {
	if v, ok := ctx.Value(tokenKey{}).(string); ok {
		return v, nil
	}
	return "", errors.New("no user token in the context")
}

// user is a simulated user with a client of its own, through the balancer.
type user struct {
	c  *client.Client
	tr *transport
	t  *tally
}

// cutEvery is how often a user's turn stream breaks (every cutEvery-th turn).
const cutEvery = 5

func newUser(base string, t *tally) (*user, error) {
	tr := &transport{next: &http.Transport{MaxIdleConnsPerHost: 4}, cutEvery: cutEvery}
	c, err := client.New(base, &client.Options{EngineKey: "pk_demo", UserToken: ctxToken{}, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		return nil, err
	}
	return &user{c: c, tr: tr, t: t}, nil
}

// turn asks say until a turn answers it, as a user who asks again after a failure: a broken
// stream the client could not resume, a lost turn, a refusal. It returns the answer.
func (u *user) turn(ctx context.Context, token, say string) (*widgets.Spec, bool) {
	ctx = context.WithValue(ctx, tokenKey{}, token)
	for range maxAttempts {
		a := attempt{kind: "turn", start: time.Now()}
		spec, outcome := u.turnOnce(ctx, say)
		a.end, a.outcome = time.Now(), outcome
		a.replica, _, _ = u.tr.last()
		if ctx.Err() != nil {
			return nil, false // the drill is over: neither done nor failed
		}
		u.t.add(a)
		if a.ok() {
			return spec, true
		}
		wait(ctx, pause)
	}
	return nil, false
}

func (u *user) turnOnce(ctx context.Context, say string) (*widgets.Spec, string) {
	stream, err := u.c.Turn(ctx, &client.TurnRequest{Transcript: say})
	if err != nil {
		return nil, outcomeOf(err)
	}
	defer stream.Close()
	spec, err := stream.Spec()
	_, resumes, elsewhere := u.tr.last()
	switch {
	case err != nil:
		return nil, "broken"
	case spec.Meta.Error == engine.CodeTurnLost:
		return nil, "lost"
	case spec.Meta.Error != "":
		return nil, "error:" + spec.Meta.Error
	case resumes > 0 && elsewhere:
		return spec, "resumed elsewhere"
	case resumes > 0:
		return spec, "resumed"
	}
	return spec, "ok"
}

// outcomeOf names the failure of a request that got no stream.
func outcomeOf(err error) string {
	var cerr *client.Error
	if errors.As(err, &cerr) {
		return "refused:" + cmp.Or(cerr.Code, fmt.Sprint(cerr.Status))
	}
	return "network"
}

// turns is an SSE user: balance questions, one after another, each as a new user.
func (u *user) turns(ctx context.Context, worker int) {
	for n := 0; ctx.Err() == nil; n++ {
		spec, ok := u.turn(ctx, fmt.Sprintf("drill-turn-%d-%d", worker, n), askBalance)
		if ctx.Err() != nil {
			return
		}
		u.t.finish("turn", ok && strings.Contains(spec.Speak, "$"))
	}
}

// voice is a voice-socket user: typed balance questions on a socket it opens again whenever
// the engine closes it (1012 when a replica drains, or the socket broke with a killed
// replica), asking again what the closed socket did not answer.
func (u *user) voice(ctx context.Context, worker int) {
	ctx = context.WithValue(ctx, tokenKey{}, fmt.Sprintf("drill-voice-%d", worker))
	var s *client.Stream
	defer func() {
		if s != nil {
			s.Close()
		}
	}()
	for ctx.Err() == nil {
		ok := false
		for range maxAttempts {
			if s == nil {
				var err error
				if s, err = u.c.Stream(ctx, nil); err != nil {
					s = nil
					if ctx.Err() == nil {
						u.t.add(attempt{kind: "voice", start: time.Now(), end: time.Now(), outcome: outcomeOf(err)})
						wait(ctx, pause)
					}
					continue
				}
			}
			a := attempt{kind: "voice", start: time.Now()}
			a.outcome = u.voiceTurn(ctx, s)
			a.end = time.Now()
			if ctx.Err() != nil {
				return
			}
			u.t.add(a)
			if strings.HasPrefix(a.outcome, "closed:") {
				s.Close()
				s = nil
			}
			if ok = a.ok(); ok {
				break
			}
			wait(ctx, pause)
		}
		if ctx.Err() != nil {
			return
		}
		u.t.finish("voice", ok)
		wait(ctx, 200*time.Millisecond)
	}
}

func (u *user) voiceTurn(ctx context.Context, s *client.Stream) string {
	if s.SendText(ctx, askBalance) != nil {
		// The engine closed the socket meanwhile: its close code is in what is left to read.
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		for {
			if _, err := s.Next(rctx); err != nil {
				return u.closed(err)
			}
		}
	}
	for {
		ev, err := s.Next(ctx)
		if err != nil {
			return u.closed(err)
		}
		switch ev := ev.(type) {
		case *client.DoneEvent:
			if !strings.Contains(ev.Spec.Speak, "$") {
				return "error:no_balance"
			}
			return "ok"
		case *client.ErrorEvent:
			return "error:" + ev.Code
		}
	}
}

// closed names the outcome of a turn whose socket closed: its close code.
func (u *user) closed(err error) string {
	return fmt.Sprintf("closed:%d", websocket.CloseStatus(err))
}

// actions is a user who sends money: the turn that asks for a confirm widget, then the
// execute, sent again (the same action token) until the engine answers it, as an app does
// after a network failure. The drill then holds the demo bank's ledger against the answers.
func (u *user) actions(ctx context.Context, worker int) {
	for n := 0; ctx.Err() == nil; n++ {
		token := fmt.Sprintf("drill-action-%d-%d", worker, n)
		spec, ok := u.turn(ctx, token, askToSend)
		if ctx.Err() != nil {
			return
		}
		var confirm *widgets.Confirm
		for _, w := range spec.Widgets {
			if cf, isConfirm := w.(widgets.Confirm); isConfirm {
				confirm = &cf
			}
		}
		if !ok || confirm == nil {
			u.t.finish("execute", false)
			continue
		}
		u.t.mu.Lock()
		u.t.ledger[token] = "unknown" // confirmed: from now on the bank may have it
		u.t.mu.Unlock()
		outcome := u.execute(context.WithValue(context.WithoutCancel(ctx), tokenKey{}, token), confirm.Execute)
		u.t.mu.Lock()
		u.t.ledger[token] = outcome
		u.t.mu.Unlock()
		u.t.finish("execute", outcome == "executed")
	}
}

// execute sends the confirmed action until the engine answers it: "executed", "declined", or
// "unknown" when no answer came. It goes on after the drill's end (ctx has no end) for at most
// settleWithin, so that each action confirmed is settled.
func (u *user) execute(ctx context.Context, exec widgets.Execute) string {
	for deadline := time.Now().Add(settleWithin); time.Now().Before(deadline); {
		a := attempt{kind: "execute", start: time.Now(), token: ctx.Value(tokenKey{}).(string)}
		res, err := u.c.Execute(ctx, exec, client.Auth{Method: client.AuthFaceID, VerifiedAt: time.Now()}, nil)
		a.end = time.Now()
		a.replica, _, _ = u.tr.last()
		var cerr *client.Error
		switch {
		case err == nil:
			a.outcome = "ok"
			u.t.add(a)
			if res.Done.Type == "success" {
				return "executed"
			}
			return "declined"
		case errors.As(err, &cerr) && !cerr.Retryable && cerr.Code != engine.CodeActionInProgress:
			a.outcome = "refused:" + cerr.Code
			u.t.add(a)
			return "unknown"
		}
		a.outcome = outcomeOf(err)
		u.t.add(a)
		time.Sleep(2 * pause)
	}
	return "unknown"
}

// wait waits d, or until ctx ends.
func wait(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

// traffic runs the users until ctx ends, and waits for their last actions to settle.
func traffic(ctx context.Context, base string, sse, voice, actions int, t *tally) (func(), error) {
	var wg sync.WaitGroup
	for kind, n := range map[string]int{"turn": sse, "voice": voice, "execute": actions} {
		for i := range n {
			u, err := newUser(base, t)
			if err != nil {
				return nil, err
			}
			wg.Go(func() {
				switch kind {
				case "turn":
					u.turns(ctx, i)
				case "voice":
					u.voice(ctx, i)
				case "execute":
					u.actions(ctx, i)
				}
			})
		}
	}
	return wg.Wait, nil
}
