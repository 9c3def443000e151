package telephony

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/convengine/engine"
)

// A Line is a transport's side of one call: Twilio's media stream, a SIP call's RTP. Its
// methods are called from several goroutines at once (the call's, and the transport's reader
// for Clear) and must not block past ctx.
type Line interface {
	// Play sends 8 kHz mono PCM to the caller, after what was sent before; it returns once the
	// audio is on its way, not once it was heard.
	Play(ctx context.Context, pcm []int16) error
	// Mark sends a mark behind the audio sent so far: the transport reports it with
	// [Call.Marked] once the caller heard that audio, or once Clear dropped it.
	Mark(ctx context.Context, name string) error
	// Clear drops the audio sent but not yet heard.
	Clear(ctx context.Context) error
	// Transfer hands the call to a person at number (E.164); the call's audio then ends.
	Transfer(ctx context.Context, number string) error
	// Hangup ends the call.
	Hangup(ctx context.Context) error
}

// LineRate is the sample rate of a [Line]'s audio, both ways.
const LineRate = 8000

// Options configure a [Phone]. A nil *Options means the defaults.
type Options struct {
	// Calls bounds the calls at once; nil: 256 in the process, 2 per calling number.
	Calls *Calls
	// Verifier asks the tenants' backends who is calling; nil: a Verifier with its defaults.
	Verifier *Verifier
	// BargeIn is how long a caller must speak over an answer to stop it (default 200ms);
	// EndOfSpeech the silence that ends an utterance (default 700ms).
	BargeIn, EndOfSpeech time.Duration
	// RecognizerEndOfSpeech lets a streaming recogniser's endpointing end utterances too
	// (Deepgram's speech_final), when it finds the end before the silence has lasted
	// EndOfSpeech.
	RecognizerEndOfSpeech bool
	// Transferred, when set, is told that a call was handed to a person by phone, with the
	// handoff the conversation opened (package handoff), which the host may end: the person
	// takes the call, not the handoff's desk.
	Transferred func(ctx context.Context, tenant, handoffID string)
	// Figures, when set, gets each call's figures when it ends.
	Figures func(tenant string, f *Figures)
}

// A Phone answers the calls of every transport (package twilio; SIP): it verifies callers,
// bounds the calls through the engine's admission, runs their conversations, and at the
// engine's Shutdown says goodbye on each call and hangs up. It is safe for concurrent use.
type Phone struct {
	e         *engine.Engine
	o         Options
	greetings greetings

	mu      sync.Mutex
	calls   map[*Call]struct{}
	closing bool
	ended   chan struct{} // closed when the last call ended during a shutdown
}

// New returns the phone of e, registered with e's Shutdown.
func New(e *engine.Engine, o *Options) *Phone {
	p := &Phone{e: e, calls: map[*Call]struct{}{}}
	if o != nil {
		p.o = *o
	}
	if p.o.Calls == nil {
		p.o.Calls = NewCalls(256, 0, 2)
	}
	if p.o.Verifier == nil {
		p.o.Verifier = &Verifier{}
	}
	if p.o.BargeIn <= 0 {
		p.o.BargeIn = 200 * time.Millisecond
	}
	if p.o.EndOfSpeech <= 0 {
		p.o.EndOfSpeech = 700 * time.Millisecond
	}
	p.greetings.m = map[string]*greeting{}
	e.OnShutdown(p.shutdown)
	return p
}

// CallInfo is what a transport knows of a call when it answers it.
type CallInfo struct {
	// ID names the call in logs and to the tenant's backend (X-Request-ID): 1 to 128 letters,
	// digits or ._:- (Twilio's CallSid).
	ID string
	// From is the calling number (E.164), or "anonymous"; To the number called.
	From, To string
}

// Answer answers a call of the tenant of entry on line: it admits it (a place among the
// calls, the tenant's rate limits) and returns the call, whose conversation [Call.Run] runs.
// A call refused (busy, shutting down) is still returned, with [Call.Refused] set: Run then
// tells the caller to call again, and hangs up; a transport that can refuse a call before
// answering it (SIP's 486 or 503) may do so and not Run it.
func (p *Phone) Answer(ctx context.Context, entry Entry, info CallInfo, line Line) *Call {
	c := newCall(p, entry, info, line)
	p.mu.Lock()
	closing := p.closing
	if !closing {
		p.calls[c] = struct{}{}
	}
	p.mu.Unlock()
	if closing {
		c.refused = engine.NewProblem(http.StatusServiceUnavailable, engine.CodeShuttingDown, "the engine is shutting down")
		return c
	}
	var err error
	if c.admission, err = p.o.Calls.Admit(ctx, p.e, entry.Tenant.Key, info.ID, info.From); err != nil {
		if !errors.As(err, &c.refused) {
			c.refused = engine.NewProblem(http.StatusInternalServerError, engine.CodeInternal, err.Error())
		}
		p.remove(c) // a refused call holds nothing: shutdown does not wait for it
	}
	return c
}

// Prepare synthesizes the greeting of entry's tenant ahead of its call (when the call's
// webhook arrives), so that the caller hears it as soon as the audio flows.
func (p *Phone) Prepare(entry Entry) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.greetings.get(ctx, p.e, entry.Tenant, greetingText(entry))
	}()
}

func (p *Phone) remove(c *Call) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.calls, c)
	if p.closing && len(p.calls) == 0 && p.ended != nil {
		close(p.ended)
		p.ended = nil
	}
}

// goodbyeTime is what a call needs to end once asked: its running turn answered, the closing
// line said, the hang-up sent.
const goodbyeTime = 15 * time.Second

// shutdown takes no more calls and lets those in progress go on until ctx's deadline less
// goodbyeTime (none: at once); then it asks every call to say goodbye and hang up once its
// running turn is answered, and waits until they have, or ctx ends.
func (p *Phone) shutdown(ctx context.Context) error {
	p.mu.Lock()
	p.closing = true
	var ended chan struct{}
	if len(p.calls) > 0 {
		ended = make(chan struct{})
		p.ended = ended
	}
	p.mu.Unlock()
	if ended == nil {
		return nil
	}
	// A call cannot move to another replica: it goes on while the drain allows, and is told
	// goodbye in time to hear it.
	if deadline, ok := ctx.Deadline(); ok {
		select {
		case <-ended:
			return nil
		case <-ctx.Done():
		case <-time.After(time.Until(deadline) - goodbyeTime):
		}
	}
	p.mu.Lock()
	for c := range p.calls {
		c.close()
	}
	p.mu.Unlock()
	select {
	case <-ended:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// greetings holds the greetings synthesized for the line, by tenant and text; a greeting being
// synthesized is waited for, not synthesized twice.
type greetings struct {
	mu sync.Mutex
	m  map[string]*greeting
}

type greeting struct {
	ready chan struct{} // closed once pcm is set
	pcm   []int16
}

// maxGreetings bounds the greetings kept: one per tenant and language.
const maxGreetings = 256

func (g *greetings) get(ctx context.Context, e *engine.Engine, t *engine.Tenant, text string) []int16 {
	key := t.Key + "\x00" + text
	g.mu.Lock()
	gr, ok := g.m[key]
	if !ok && len(g.m) < maxGreetings {
		gr = &greeting{ready: make(chan struct{})}
		g.m[key] = gr
	}
	g.mu.Unlock()
	if ok {
		select {
		case <-gr.ready:
			return gr.pcm
		case <-ctx.Done():
			return nil
		}
	}
	pcm := synthesizeAll(ctx, e, t, text)
	if gr != nil {
		g.mu.Lock()
		if pcm == nil {
			delete(g.m, key) // tried again by the next call
		}
		g.mu.Unlock()
		gr.pcm = pcm
		close(gr.ready)
	}
	return pcm
}

// synthesizeAll speaks text in t's voice at the line's rate, nil when it cannot.
func synthesizeAll(ctx context.Context, e *engine.Engine, t *engine.Tenant, text string) []int16 {
	sp := e.Speaker(ctx, &engine.Caller{EngineKey: t.Key, Environment: engine.EnvProduction, RequestID: "greeting"}, t.Locale)
	if sp == nil {
		return nil
	}
	var out []int16
	for _, s := range sentences(text) {
		pcm, err := synthesize(ctx, sp, s, nil)
		if err != nil {
			return nil
		}
		out = append(out, pcm...)
	}
	return out
}
