package handoff

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
)

// Options configure a [Switchboard]; nil fields mean defaults.
type Options struct {
	// Tenants finds the tenant of a handoff (its configuration, its webhook's secret): the
	// engine's TenantStore. Required.
	Tenants engine.TenantStore
	// Store keeps the handoffs; nil means a MemoryStore (one replica).
	Store Store
	// Replay remembers the signatures of the contact centre's answers for five minutes, so
	// that one is not taken twice; nil means an engine.MemoryStore. Share it across replicas.
	Replay engine.ReplayStore
	// Privacy masks the summary, transcript and messages sent out as the tenant's policy
	// masks what reaches the model (Config.Privacy: package pii). nil: nothing is masked.
	Privacy engine.Privacy
	// Desk is the contact centre of tenants whose configuration says desk: true, such as
	// the reference server's demo desk ([Desk]).
	Desk Handoff
	// Default is the configuration of tenants without a "handoff" object; nil: they have
	// no handoff, and the assistant says so.
	Default *Config
	// Summarize writes the summary a person opens on; nil means the template ([Template]).
	Summarize func(ctx context.Context, t *engine.Tenant, b *Brief) (string, error)
	// Webhook configures the webhooks' deliveries.
	Webhook *WebhookOptions
	// Recorder keeps every event of a handoff (requested, joined, released, rejected, failed)
	// and the messages of the person and of the customer in the conversation's record, in its
	// chain: the engine's Config.Recorder when it records handoffs (package record's does).
	// nil records nothing.
	Recorder engine.HandoffRecorder
	// Push brings a handoff's events to the customer on channels without a stream of their
	// own, on the replica that started it (where the customer's voice socket is): each
	// person's message and change of status as a render spec (see [Switchboard.Follow]),
	// in order, from a goroutine of the handoff's that it may block. The reference server
	// gives them to voice.Server.Say. nil: the customer's stream alone carries them.
	Push func(ctx context.Context, st *State, spec *widgets.Spec)
	// Logger takes the switchboard's errors, never a message's text; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now. Tick is how often the timers are checked (1 s).
	Now  func() time.Time
	Tick time.Duration
}

// Switchboard passes conversations between the assistant and a tenant's contact centre: it
// starts handoffs (the user asks, a tenant's rule, the host), relays the customer's turns to
// the person while one holds the conversation, brings the person's messages to the customer,
// and gives the conversation back. It reaches the engine through its hooks ([Switchboard.Guards],
// [Switchboard.Toolset]) and routes ([Switchboard.Routes]). It is safe for concurrent use.
type Switchboard struct {
	o      Options
	store  Store
	replay engine.ReplayStore
	log    *slog.Logger
	now    func() time.Time

	mu       sync.Mutex
	e        *engine.Engine
	webhooks map[string]*Webhook // by URL and secret
	turns    sync.Map            // weak *engine.ToolEnv → *turnNote
	ctx      context.Context     // ends at Close: the centre's calls and the timers
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	closed   bool
	// draining ends when the engine shuts down: the customers' streams end then, for their
	// clients to follow them from another replica.
	draining  context.Context
	stopDrain context.CancelFunc
	// streams bounds the customers' open streams: 4 for one user, 4096 in all.
	streams *engine.Hold
}

// New returns a switchboard. Give its hooks to the engine's Config, then [Switchboard.Bind]
// the engine made with them.
func New(o *Options) (*Switchboard, error) {
	if o == nil || o.Tenants == nil {
		return nil, errors.New("handoff: Options.Tenants is required")
	}
	s := &Switchboard{o: *o, store: o.Store, replay: o.Replay, log: o.Logger, now: o.Now, webhooks: map[string]*Webhook{},
		streams: engine.NewHold("handoff_streams", "handoff streams", 4096, 0, 4)}
	if s.store == nil {
		s.store = &MemoryStore{Now: o.Now}
	}
	if s.replay == nil {
		s.replay = &engine.MemoryStore{Now: o.Now}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.o.Tick <= 0 {
		s.o.Tick = time.Second
	}
	if o.Default != nil {
		if err := o.Default.Check(); err != nil {
			return nil, err
		}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.draining, s.stopDrain = context.WithCancel(context.Background())
	return s, nil
}

// untilDrain returns ctx, ended too when the engine shuts down, and its stop.
func (s *Switchboard) untilDrain(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.draining, cancel)
	return ctx, func() { stop(); cancel() }
}

// Bind gives the switchboard the engine whose hooks it was given, and starts its timers
// (queue time-outs, silent persons, customers who left) until Close.
func (s *Switchboard) Bind(e *engine.Engine) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.e != nil || s.closed {
		return errors.New("handoff: Bind is called once, before Close")
	}
	s.e = e
	s.wg.Add(1)
	go s.timers()
	e.OnShutdown(func(context.Context) error { s.stopDrain(); return nil })
	return nil
}

// Close stops the timers and the deliveries under way, and waits for them.
func (s *Switchboard) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	return nil
}

func (s *Switchboard) engine() *engine.Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.e
}

// Store returns the switchboard's store.
func (s *Switchboard) Store() Store { return s.store }

// config returns the handoff configuration of tenant key, nil for none.
func (s *Switchboard) config(ctx context.Context, key string) (*engine.Tenant, *Config, error) {
	t, err := s.o.Tenants.Tenant(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	return t, s.tenantConfig(t), nil
}

func (s *Switchboard) tenantConfig(t *engine.Tenant) *Config {
	c, err := TenantConfig(t)
	if err != nil {
		s.log.Error("handoff: a tenant's configuration is invalid", "tenant", t.Key, "err", err)
		return nil
	}
	if c == nil {
		c = s.o.Default
	}
	return c
}

// centre returns the contact centre of a configuration.
func (s *Switchboard) centre(c *Config) (Handoff, string) {
	if c.Webhook == "" {
		return s.o.Desk, "desk"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := c.Webhook + "\x00" + c.Secret
	w := s.webhooks[k]
	if w == nil {
		w = NewWebhook(c.Webhook, c.Secret, s.o.Webhook)
		s.webhooks[k] = w
	}
	return w, "webhook"
}

// Who is the conversation a handoff is about: its tenant, user and conversation, and how the
// customer talks.
type Who struct {
	Tenant       *engine.Tenant
	Environment  string
	User         string // engine.UserKey of the caller
	Conversation string
	// Session is the turn's session, "" without one: the record keeps a conversation's chain
	// under its session when it has one.
	Session string
	Locale  string
	Channel string
}

// Outcome is what came of asking for a person: the handoff (nil when none started) and the
// line that tells the customer.
type Outcome struct {
	State *State
	Say   string
	// Started is false when the conversation was with a person already.
	Started bool
}

// Handoff hands the conversation of c to a person, as the host asks in process; reason says
// why, for the person. The error is a *engine.Problem for a caller the engine refuses.
func (s *Switchboard) Handoff(ctx context.Context, c *engine.Caller, conversation, locale, reason string) (*Outcome, error) {
	e := s.engine()
	if e == nil {
		return nil, errors.New("handoff: the switchboard is not bound to an engine")
	}
	if _, err := e.Admit(ctx, c, engine.Work{Kind: engine.WorkRelay}); err != nil {
		return nil, err
	}
	t, err := s.o.Tenants.Tenant(ctx, c.EngineKey)
	if err != nil {
		return nil, err
	}
	return s.start(ctx, &Who{Tenant: t, Environment: c.Environment, User: e.UserKey(c), Conversation: conversation,
		Locale: locale, Channel: "text"}, reason)
}

// start opens a handoff for w, unless the tenant has none, is closed, or the user opened too
// many.
func (s *Switchboard) start(ctx context.Context, w *Who, reason string) (*Outcome, error) {
	loc := w.Locale
	c := s.tenantConfig(w.Tenant)
	if c == nil || (c.Webhook == "" && s.o.Desk == nil) {
		return &Outcome{Say: line("unavailable", loc)}, nil
	}
	now := s.now()
	if c.Hours != nil {
		if in, _ := c.Hours.Within(now); !in {
			return &Outcome{Say: line("closed", loc, "{hours}", hoursText(c.Hours))}, nil
		}
	}
	if st, err := s.store.Latest(ctx, w.Tenant.Key, w.User, w.Conversation); err == nil && st.Status.Open() {
		return &Outcome{State: st, Say: line("already", loc)}, nil
	}
	n, err := s.store.Count(ctx, w.Tenant.Key+"\x00"+w.User, time.Hour)
	if err != nil {
		return nil, fmt.Errorf("handoff: counting the user's handoffs: %w", err)
	}
	if n > c.perUser() {
		return &Outcome{Say: line("too_many", loc)}, nil
	}
	lines, err := s.store.Lines(ctx, w.Tenant.Key, w.User, w.Conversation)
	if err != nil {
		return nil, fmt.Errorf("handoff: reading the conversation: %w", err)
	}
	reason = clip(reason, 500)
	if reason == "" {
		reason = "the customer asked for a person"
	}
	b := &Brief{Locale: loc, Reason: reason, Lines: lines}
	summary := Template(b)
	if s.o.Summarize != nil {
		if sum, err := s.o.Summarize(ctx, w.Tenant, b); err == nil && sum != "" {
			summary = s.mask(w.Tenant, clip(sum, 4000))
		} else if err != nil {
			s.log.WarnContext(ctx, "handoff: the model's summary failed; the template's is used", "tenant", w.Tenant.Key, "err", err)
		}
	}
	centre, kind := s.centre(c)
	st := &State{ID: uuid.NewString(), Tenant: w.Tenant.Key, Environment: w.Environment, User: w.User,
		ConversationID: w.Conversation, Session: w.Session, Locale: loc, Channel: w.Channel, Reason: reason, Summary: summary,
		Transcript: lines, Status: StatusQueued, Centre: kind, Created: now, LastCustomer: now}
	switch err := s.store.Create(ctx, st); {
	case errors.Is(err, ErrActive):
		return &Outcome{Say: line("already", loc)}, nil
	case err != nil:
		return nil, fmt.Errorf("handoff: keeping the handoff: %w", err)
	}
	say := line("queued", loc)
	s.emit(ctx, st, &Event{Type: "handoff", Status: StatusQueued, Text: say})
	req := &Request{ID: st.ID, Tenant: st.Tenant, ConversationID: st.ConversationID, Locale: loc, Channel: st.Channel,
		Reason: reason, Summary: summary, Transcript: lines}
	if s.o.Push != nil {
		s.background(func(ctx context.Context) { s.push(ctx, st) })
	}
	s.background(func(ctx context.Context) {
		if err := centre.Start(ctx, req); err != nil {
			s.log.Warn("handoff: the contact centre was not reached", "handoff", st.ID, "tenant", st.Tenant, "err", err)
			s.finish(ctx, st.ID, StatusFailed, "centre_down", false)
		}
	})
	return &Outcome{State: st, Say: say, Started: true}, nil
}

// background runs f on a goroutine of the switchboard, until Close.
func (s *Switchboard) background(f func(ctx context.Context)) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		f(s.ctx)
	}()
}

// emit adds an event to the handoff's stream, stamped now, and to the conversation's record:
// every event passes here, once, on the replica that made it.
func (s *Switchboard) emit(ctx context.Context, st *State, ev *Event) {
	ev.At = s.now()
	if err := s.store.Append(ctx, st.ID, ev); err != nil {
		s.log.ErrorContext(ctx, "handoff: an event was not kept", "handoff", st.ID, "err", err)
	}
	if s.o.Recorder != nil {
		s.o.Recorder.Handoff(context.WithoutCancel(ctx), recorded(st, ev))
	}
}

// recorded is an event as the conversation's record keeps it, in the chain of the
// conversation's turns.
func recorded(st *State, ev *Event) *engine.RecordedHandoff {
	r := &engine.RecordedHandoff{RecordKey: engine.RecordKey{Time: ev.At, Tenant: st.Tenant, Environment: st.Environment,
		User: st.User, SessionID: st.Session, ConversationID: cmp.Or(st.Session, st.ConversationID)}, Handoff: st.ID, Person: ev.Agent}
	switch {
	case ev.Type == "message":
		r.Event, r.Text = ev.From+"_message", ev.Text
	case ev.Status == StatusQueued:
		r.Event, r.Reason, r.Text = "requested", st.Reason, st.Summary
	case ev.Status == StatusConnected:
		r.Event = "joined"
	case ev.Status == StatusReleased:
		r.Event, r.Text = "released", st.Note
	case st.Ended == "rejected":
		r.Event, r.Reason = "rejected", st.RejectReason
	default:
		r.Event, r.Reason = "failed", st.Ended
	}
	return r
}

// Relay passes the customer's text to the person holding the handoff.
func (s *Switchboard) Relay(ctx context.Context, st *State, text string) error {
	t, c, err := s.config(ctx, st.Tenant)
	if err != nil || c == nil {
		return fmt.Errorf("handoff: the tenant of handoff %s: %w", st.ID, cmpErr(err, ErrEnded))
	}
	text = s.mask(t, clip(text, 4000))
	now := s.now()
	if _, err := s.store.Update(ctx, st.ID, func(x *State) error {
		if !x.Status.Open() {
			return ErrEnded
		}
		x.LastCustomer = now
		return nil
	}); err != nil {
		return err
	}
	s.emit(ctx, st, &Event{Type: "message", From: "user", Text: text})
	centre, _ := s.centre(c)
	if err := centre.Send(ctx, &Message{ID: st.ID, Text: text, At: now}); err != nil {
		s.log.WarnContext(ctx, "handoff: a message did not reach the contact centre", "handoff", st.ID, "err", err)
		s.finish(ctx, st.ID, StatusFailed, "centre_down", false)
		return fmt.Errorf("handoff: relaying: %w", err)
	}
	return nil
}

// Answer takes what the contact centre says of a handoff. Errors: ErrNotFound, ErrEnded,
// ErrInvalid, or the store's.
func (s *Switchboard) Answer(ctx context.Context, a *Answer) error {
	now := s.now()
	var ev Event
	switch a.Type {
	case AgentJoined:
		if a.Agent = clip(a.Agent, 80); a.Agent == "" {
			return fmt.Errorf("%w: agent.name is required", ErrInvalid)
		}
	case AgentMessage:
		if a.Text == "" || utf8.RuneCountInString(a.Text) > 4000 {
			return fmt.Errorf("%w: text must be 1 to 4000 characters", ErrInvalid)
		}
	case Released:
		a.Note = clip(a.Note, 2000)
	case Rejected:
		a.Reason = clip(a.Reason, 500)
	default:
		return fmt.Errorf("%w: unknown type", ErrInvalid)
	}
	st, err := s.store.Update(ctx, a.ID, func(x *State) error {
		if !x.Status.Open() {
			return ErrEnded
		}
		x.LastPerson = now
		switch a.Type {
		case AgentJoined:
			x.Status, x.Agent, x.Joined = StatusConnected, a.Agent, now
			ev = Event{Type: "handoff", Status: StatusConnected, Agent: a.Agent, Text: line("joined", x.Locale, "{agent}", a.Agent)}
		case AgentMessage:
			if x.Status == StatusQueued {
				x.Status, x.Joined = StatusConnected, now
			}
			ev = Event{Type: "message", From: "person", Agent: x.Agent, Text: a.Text}
		case Released:
			x.Status, x.Note, x.Closed, x.Ended = StatusReleased, a.Note, now, "released"
			ev = Event{Type: "handoff", Status: StatusReleased, Agent: x.Agent, Text: line("released", x.Locale, "{agent}", x.personName())}
		case Rejected:
			x.Status, x.Closed, x.Ended, x.RejectReason = StatusFailed, now, "rejected", a.Reason
			ev = Event{Type: "handoff", Status: StatusFailed, Text: line("failed", x.Locale)}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.emit(ctx, st, &ev)
	return nil
}

func (x *State) personName() string {
	if x.Agent != "" {
		return x.Agent
	}
	return line("person", x.Locale)
}

// End ends an open handoff for the host: the customer is told, and the contact centre too.
func (s *Switchboard) End(ctx context.Context, id string) error {
	if !s.finish(ctx, id, StatusFailed, "host", true) {
		return ErrEnded
	}
	return nil
}

// finish ends an open handoff with status and reason, tells the customer and, with tell, the
// centre; it reports false when the handoff was over already.
func (s *Switchboard) finish(ctx context.Context, id string, status Status, reason string, tell bool) bool {
	now := s.now()
	st, err := s.store.Update(ctx, id, func(x *State) error {
		if !x.Status.Open() {
			return ErrEnded
		}
		x.Status, x.Ended, x.Closed = status, reason, now
		return nil
	})
	if err != nil {
		return false
	}
	key := "failed"
	if status == StatusReleased {
		key = "released"
	}
	s.emit(ctx, st, &Event{Type: "handoff", Status: status, Agent: st.Agent, Text: line(key, st.Locale, "{agent}", st.personName())})
	if tell {
		if _, c, err := s.config(ctx, st.Tenant); err == nil && c != nil {
			centre, _ := s.centre(c)
			s.background(func(ctx context.Context) {
				if err := centre.End(ctx, id, reason); err != nil {
					s.log.Warn("handoff: the contact centre was not told of the end", "handoff", id, "err", err)
				}
			})
		}
	}
	return true
}

// timers ends the handoffs whose queue timed out, whose person went silent or whose customer
// left, every Tick, until Close. Any replica may end one: the store's Update decides once.
func (s *Switchboard) timers() {
	defer s.wg.Done()
	tick := time.NewTicker(s.o.Tick)
	defer tick.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		}
		s.Sweep(s.ctx)
	}
}

// Sweep ends the handoffs past their time now; the timers call it every Tick.
func (s *Switchboard) Sweep(ctx context.Context) {
	open, err := s.store.Open(ctx)
	if err != nil {
		s.log.Warn("handoff: the store failed", "err", err)
		return
	}
	now := s.now()
	for _, st := range open {
		_, c, err := s.config(ctx, st.Tenant)
		if err != nil || c == nil {
			continue
		}
		switch {
		case st.Status == StatusQueued && now.Sub(st.Created) >= c.queueTimeout():
			s.finish(ctx, st.ID, StatusFailed, "timeout", true)
		case st.Status == StatusConnected && now.Sub(st.LastPerson) >= c.silence():
			s.finish(ctx, st.ID, StatusFailed, "person_silent", true)
		case now.Sub(st.LastCustomer) >= c.idle():
			s.finish(ctx, st.ID, StatusFailed, "customer_left", true)
		}
	}
}

// Seen notes that the customer of a handoff is still there (their stream is open).
func (s *Switchboard) seen(ctx context.Context, id string) {
	now := s.now()
	_, _ = s.store.Update(ctx, id, func(x *State) error {
		if !x.Status.Open() {
			return ErrEnded
		}
		x.LastCustomer = now
		return nil
	})
}

// mask applies the tenant's privacy policy to text going out.
func (s *Switchboard) mask(t *engine.Tenant, text string) string {
	if s.o.Privacy == nil {
		return text
	}
	if sh := s.o.Privacy.Turn(t); sh != nil {
		return sh.ToModel(text)
	}
	return text
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

func cmpErr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}
