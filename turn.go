package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/convengine/engine/internal/batchwriter"
	"github.com/convengine/engine/internal/body"
	"github.com/convengine/engine/internal/jsonenc"
	"github.com/convengine/engine/internal/locale"
	"github.com/convengine/engine/internal/sse"
	"github.com/convengine/engine/internal/verbalize"
	"github.com/convengine/engine/widgets"
)

// Bounds of a turn request.
const (
	defaultMaxSteps  = 6
	defaultToolLimit = 10 * time.Second
	defaultTurnLimit = 60 * time.Second
	// speakReserve is the room made for an answer's text up front: a spoken answer of a few
	// sentences then takes one allocation instead of one per doubling.
	speakReserve    = 256
	maxCallsPerStep = 64 // tool calls one completion may ask for
)

// Event names of the turn stream, in the order a turn sends them: start; status and speak while
// the model and the tools run; then widget for each widget and done with the render spec; or,
// when the turn fails, error and then done with an apology.
const (
	EventStart  = "start"
	EventStatus = "status"
	EventSpeak  = "speak"
	EventWidget = "widget"
	EventError  = "error"
	EventDone   = "done"
)

// turnSink receives what a turn produces, in order: speech deltas and tool status while the
// model runs; then either the widgets and done with the spec, or an error and done with the
// apology. Every method is called from the turn's goroutine. The one sink a turn runs into is
// [Engine.Turn]'s, whose events the SSE writer and the voice socket's sink consume in turn
// (deliver). A method that returns an error reports that nobody is listening any more.
type turnSink interface {
	Speak(delta string) error
	Status(text, tool string)
	Widget(w widgets.Widget) error
	Fail(code, message string, retryable bool)
	Done(spec widgets.Spec) error
}

var _ turnSink = (*sse.Writer)(nil)

// turnRequest is the body of POST /engine, and what callers inside the engine fix beyond it:
// unclear marks a voice turn whose speech the transcriber did not understand; heard, a
// transcript that came from audio; wav and pcm, audio to transcribe (Engine.Turn's); turnID,
// the turn's id when chosen before; deadline, the turn's when it started before its body was
// read.
type turnRequest struct {
	body.Turn
	unclear   bool
	heard     bool
	wav       []byte
	pcm       []int16
	listening Listening
	turnID    string
	deadline  time.Time
}

// turn is one run of POST /engine: what was asked and what has been answered so far.
type turn struct {
	req            *request
	env            *ToolEnv
	mode           Mode
	locale         string
	conversationID string
	turnID         string
	sessionID      string
	userKey        string        // the user's keyed hash, for the Observer and the Budget
	budget         Reservation   // the turn's place among its user's turns, with its first call until that is settled
	call           Reservation   // the running model call's tokens, until settled
	mreq           *ModelRequest // made early to reserve the turn's tokens
	tokens         int64         // the tokens its model calls spent, reported or estimated
	counted        int           // 1 once the turn started: a turn refused before counts for no budget
	country        string
	screen         string
	transcript     string
	heard          bool   // the transcript came from audio
	unclear        bool   // speech was heard but not understood: the turn only says so
	guardAnswer    string // the BeforeTurn guard's answer: the turn only says it
	history        []Message
	shield         Shield // Config.Privacy's for the turn, nil without one
	disclosure     string // the AI disclosure its start event carries, on a conversation's first turn
	audio          *HeardAudio
	records        []ToolRecord // its tool calls, for Config.Recorder
	held           string       // speech held back until a placeholder or number is complete

	tools map[string]Tool
	specs []ToolSpec

	out         turnSink
	events      eventSink // out, while the turn runs
	step        step      // the running completion
	speak       strings.Builder
	lineStart   bool // the voice filter is at the start of a line
	widgets     []widgets.Widget
	follow      string
	suggestions []string
	errCode     string
	toolCalls   int
	steps       int

	ctx     context.Context // the turn's, once it runs: the observer's span rides in it
	started time.Time
	spoke   bool
}

// TurnHandler returns the handler of POST /engine, the streamed turn.
func (e *Engine) TurnHandler() http.Handler {
	return e.route(http.MethodPost, PathTurn, http.HandlerFunc(e.serveTurn))
}

func (e *Engine) serveTurn(w http.ResponseWriter, r *http.Request) {
	start := e.now()
	req, admission, p := e.readAdmitted(r, true, WorkTurn)
	if p != nil {
		writeProblem(w, p, req.idOrEmpty())
		return
	}
	defer admission.Release()

	// The stream is the turn's events as Engine.Turn yields them, written as they come; a
	// write that fails (the client went away, or does not read) stops the turn.
	st := &sseTurn{w: w, e: e, requestID: req.ID}
	defer st.close()
	ctx := r.Context()
	if e.turnLog != nil {
		// The turn is kept once it has started: it outlives its connection, so that the client
		// can resume it. Until then (its body, its audio's transcription) it ends with the
		// connection, and an abandoned upload holds nothing.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(context.WithoutCancel(ctx))
		defer cancel()
		st.keep = context.AfterFunc(r.Context(), cancel)
		defer st.keep()
	}
	// The turn's deadline starts now: reading the body and transcribing its audio count
	// against it.
	var body turnRequest
	body.deadline = time.Now().Add(req.Tenant.Limits.TurnTimeout.or(defaultTurnLimit))
	if p := bodyProblem(jsonenc.ReadBodyWithin(ctx, body.deadline, w, r, e.maxTurnBody, &body.Turn)); p != nil {
		writeProblem(w, p, req.ID)
		return
	}
	e.playTurn(ctx, req, &body, st)
	t := st.t
	if t == nil {
		return
	}
	e.logTurn(r.Context(), req, t, start, slog.Bool("clientGone", r.Context().Err() != nil))
}

// logTurn logs a turn that is over, started at start; how says what carried it.
func (e *Engine) logTurn(ctx context.Context, req *request, t *turn, start time.Time, how slog.Attr) {
	e.log.LogAttrs(ctx, slog.LevelInfo, "turn",
		slog.String("requestId", req.ID), slog.String("tenant", req.Tenant.Key), slog.String("env", req.Environment.Name), how,
		slog.String("mode", string(t.mode)), slog.Int("steps", t.steps), slog.Int("toolCalls", t.toolCalls),
		slog.Int("widgets", len(t.widgets)), slog.String("error", t.errCode), slog.Float64("ms", float64(e.now().Sub(start).Microseconds())/1000))
}

// turnEvents is the one path of every turn, whatever carries it: it validates body, hears
// its audio, lists the tools, then runs the turn and yields its events, from start to done.
// A turn that cannot start yields one error, a *Problem, and nothing else. The turn runs in
// the goroutine of the caller's loop; leaving the loop, or cancelling ctx, stops it as a
// client that went away does, and no done follows. started, when not nil, is given the turn
// before its start event: its fields are final once the loop is over.
func (e *Engine) turnEvents(ctx context.Context, req *request, body *turnRequest, started func(*turn)) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		e.playTurn(ctx, req, body, &seqConsumer{loop: yield, onStart: started})
	}
}

// playTurn is turnEvents with its consumer as an interface, for the turn stream, whose writer
// takes the events without the closures of a range loop.
func (e *Engine) playTurn(ctx context.Context, req *request, body *turnRequest, to turnConsumer) {
	// The deadline covers the transcription of the turn's audio, however long it waits.
	deadline := body.deadline
	if deadline.IsZero() {
		deadline = time.Now().Add(req.Tenant.Limits.TurnTimeout.or(defaultTurnLimit))
	}
	tctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	t, p := newTurn(req, body)
	if p == nil && e.privacy != nil {
		t.shield = e.privacy.Turn(req.Tenant)
	}
	if p == nil && (e.keysUsers() || e.budget != nil) {
		t.userKey = e.userOf(req)
	}
	if p == nil {
		p = e.hearTurn(tctx, t, body)
	}
	if p == nil {
		p = e.beforeTurn(ctx, t)
	}
	if p == nil && t.guardAnswer == "" {
		p = e.loadTools(ctx, t)
	}
	if p == nil && e.budget != nil {
		// The turn's place among its user's turns, and its first model call, are reserved
		// before it starts; each later call reserves its own as it runs.
		p = e.reserveTurn(tctx, t)
		defer func() {
			e.settle(ctx, t.budget, Spend{Tenant: req.Tenant, User: t.userKey, Tokens: t.tokens, Turns: t.counted})
		}()
	}
	if p != nil {
		to.yield(Event{}, p)
		return
	}
	sink := &t.events
	sink.to, sink.ctx, sink.cancel, sink.requestID = to, tctx, cancel, req.ID
	t.out, t.counted = sink, 1
	to.started(t)
	if len(t.history) == 0 && len(req.Tenant.Disclosure) > 0 { // the lookup makes the locale's fallbacks
		t.disclosure, _ = locale.Lookup(req.Tenant.Disclosure, t.locale, req.Tenant.Locale)
	}
	if e.recorder != nil {
		defer func() { e.recordTurn(ctx, t, sink.done()) }()
	}
	if sink.send(Event{Type: EventStart, TurnID: t.turnID, ConversationID: t.conversationID, Transcript: t.toUser(t.transcript),
		Locale: t.locale, Disclosure: t.disclosure}) != nil {
		return
	}
	e.runTurnSafely(tctx, t)
	if ctx.Err() == nil && !sink.gone {
		e.finishTurn(t)
	}
}

// sseTurn writes the events of a turn as its event stream: the first event starts the
// stream; a problem before it is the response. A write that fails, a keep-alive ping's
// included, cancels the turn, unless the turn is kept in the TurnLog: it then runs on, and its
// events go to the log alone, for the client to resume.
type sseTurn struct {
	w         http.ResponseWriter
	e         *Engine
	requestID string
	t         *turn
	stream    *sse.Writer
	rec       *batchwriter.Writer[LoggedEvent]
	kept      *sse.Kept // the stream and the log, when rec keeps the turn
	// keep detaches the turn from its connection, once it starts; it reports false when the
	// client has gone already, and the turn is then not kept.
	keep func() bool
}

func (s *sseTurn) started(t *turn) {
	s.t = t
	if s.e.turnLog != nil && s.keep() {
		deadline, _ := t.events.deadline()
		s.rec = s.e.startRecorder(t, deadline) // nil when the log will not keep the turn
	}
}

func (s *sseTurn) yield(ev Event, err error) bool {
	if err != nil {
		writeProblem(s.w, problemOf(err), s.requestID)
		return false
	}
	if s.stream == nil {
		onFail := s.t.events.cancel
		if s.rec != nil {
			onFail = nil
		}
		s.stream = sse.NewWriter(s.w, s.e.now, s.e.writeTimeout, onFail)
		s.stream.KeepAlive(s.e.ping)
		if s.rec != nil {
			s.kept = &sse.Kept{Stream: s.stream, Log: func(l sse.Logged) { s.rec.Add(LoggedEvent(l)) }}
		}
	}
	if s.kept == nil {
		switch {
		case ev.Type != EventStart:
			return deliver(s.stream, ev) == nil
		case s.e.turnLog == nil:
			return s.stream.Start(ev.TurnID, ev.ConversationID, ev.Disclosure) == nil
		}
		// The engine keeps turns, not this one: its start event says so.
		return s.stream.Replay(1, ev.Type, sse.AppendStartResumable(nil, ev.TurnID, ev.ConversationID, ev.Disclosure, false)) == nil
	}
	// A kept turn's event is encoded once, for the log and the stream alike.
	var data []byte
	if ev.Type == EventStart {
		data = sse.AppendStartResumable(nil, ev.TurnID, ev.ConversationID, ev.Disclosure, true)
	} else if data, err = ev.Data(); err != nil {
		return false
	}
	s.kept.Send(ev.Type, data)
	return true
}

func (s *sseTurn) close() {
	if s.rec != nil {
		s.rec.Finish()
	}
	if s.stream != nil {
		s.stream.Close()
	}
}

// deliver hands an event after start to a sink.
func deliver(s turnSink, ev Event) error {
	switch ev.Type {
	case EventSpeak:
		return s.Speak(ev.Delta)
	case EventStatus:
		s.Status(ev.Status, ev.Tool)
	case EventWidget:
		return s.Widget(ev.Widget)
	case EventError:
		s.Fail(ev.Error.Code, ev.Error.Message, ev.Error.Retryable)
	case EventDone:
		return s.Done(*ev.Spec)
	}
	return nil
}

// problemOf returns err as a problem: turnEvents yields only problems.
func problemOf(err error) *Problem {
	if p, ok := errors.AsType[*Problem](err); ok {
		return p
	}
	return newProblem(http.StatusInternalServerError, CodeInternal, "the engine failed; the failure is logged")
}

// newTurn validates the body and builds the turn it asks for.
func newTurn(req *request, b *turnRequest) (*turn, *Problem) {
	c, bad := b.Check(b.wav != nil || b.pcm != nil || b.unclear)
	if bad != nil {
		return nil, fieldProblem(bad)
	}
	t := &turn{req: req, env: req.toolEnv(), mode: Mode(c.Mode), locale: cmp.Or(c.Locale, req.Tenant.Locale),
		turnID: cmp.Or(b.turnID, uuid.NewString()), conversationID: c.ConversationID,
		transcript: c.Transcript, unclear: b.unclear, heard: b.heard, country: c.Country, screen: c.Screen, lineStart: true}
	if req.Session != nil {
		t.sessionID = req.Session.ID
	}
	if t.conversationID == "" {
		t.conversationID = uuid.NewString()
	}
	for _, m := range c.History {
		t.history = append(t.history, Message{Role: Role(m.Role), Content: m.Content})
	}
	return t, nil
}

// loadTools lists the tenant's tools (reusing a fresh list) and describes them, with the UI
// tools, to the model.
func (e *Engine) loadTools(ctx context.Context, t *turn) *Problem {
	idx, err := e.describedTools(ctx, t.env)
	if err != nil {
		e.log.WarnContext(ctx, "listing tools failed", "requestId", t.req.ID, "tenant", t.req.Tenant.Key, "err", err)
		return newProblem(http.StatusBadGateway, CodeToolsUnavailable, "the assistant's tools could not be reached; try again")
	}
	t.tools, t.specs = idx.byName, idx.specs
	return nil
}

// runTurnSafely runs the turn and turns a panic of the model into the turn's error event: once
// the stream has started, a problem response can no longer be sent.
func (e *Engine) runTurnSafely(ctx context.Context, t *turn) {
	t.started = e.now()
	if e.obs.TurnStart != nil {
		ctx = e.obs.TurnStart(ctx, t.event())
	}
	t.ctx = ctx
	if e.obs.TurnEnd != nil {
		defer func() {
			ev := t.event()
			ev.Duration = e.now().Sub(t.started)
			if t.shield != nil {
				ev.PersonalData = t.shield.Handled()
			}
			e.obs.TurnEnd(ctx, ev)
		}()
	}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			e.log.ErrorContext(ctx, "turn panicked", "requestId", t.req.ID, "tenant", t.req.Tenant.Key,
				"panic", fmt.Sprintf("%T", v), "stack", string(debug.Stack()))
			t.fail(CodeInternal, "The engine failed.", false)
		}
	}()
	e.runTurn(ctx, t)
	if t.errCode == "" && ctx.Err() == nil {
		e.sayConfirms(t)
	}
}

// errClientGone stops a turn whose client went away.
var errClientGone = errors.New("engine: client went away")

// runTurn runs the tool loop: model steps until the model answers without needing data, or
// the step limit. Failures become the turn's error event.
func (e *Engine) runTurn(ctx context.Context, t *turn) {
	switch {
	case t.guardAnswer != "":
		e.speakLine(t, t.guardAnswer)
		return
	case t.unclear:
		e.speakLine(t, locale.Unclear(t.locale))
		return
	}
	mreq := t.mreq
	if mreq == nil {
		mreq = e.modelRequest(t)
	}
	maxSteps := t.req.Tenant.Limits.MaxSteps
	if maxSteps == 0 {
		maxSteps = defaultMaxSteps
	}
	for t.steps < maxSteps {
		t.steps++
		if err := e.guardModelRequest(ctx, t, mreq); err != nil {
			t.fail(CodeInternal, "The engine failed.", false)
			return
		}
		if t.call == nil && e.budget != nil && t.req.Tenant.Limits.tokenBudget() {
			var p *Problem
			if t.call, p = e.reserveCall(ctx, t, Spend{Tenant: t.req.Tenant, User: t.userKey}, mreq); p != nil {
				t.fail(p.Code, "The assistant has used its budget for now.", false)
				return
			}
		}
		before := t.tokens
		text, calls, finish, err := e.modelStep(ctx, t, mreq)
		e.settleCall(ctx, t, t.tokens-before)
		if err != nil {
			e.stepFailed(ctx, t, err)
			return
		}
		if finish == FinishRefused && t.speak.Len() == 0 {
			e.speakLine(t, locale.Refusal(t.locale))
		}
		if len(calls) == 0 {
			return
		}
		results, seeResults := e.handleCalls(ctx, t, calls)
		if ctx.Err() != nil {
			e.stepFailed(ctx, t, ctx.Err())
			return
		}
		mreq.Messages = append(mreq.Messages, Message{Role: RoleAssistant, Content: text, ToolCalls: calls})
		mreq.Messages = append(mreq.Messages, results...)
		if !seeResults && t.speak.Len() > 0 {
			return
		}
	}
	if t.speak.Len() == 0 {
		t.fail(CodeStepLimit, "The assistant could not finish its answer.", true)
	}
}

func (e *Engine) stepFailed(ctx context.Context, t *turn, err error) {
	switch {
	case errors.Is(err, errClientGone) || (errors.Is(err, context.Canceled) && ctx.Err() != nil):
		// Nobody is listening: nothing to report.
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		t.fail(CodeTurnTimeout, "The answer took too long.", true)
	case errors.Is(err, ErrModelUnavailable): // every model of a chain is down (package fallback)
		t.fail(CodeModelUnavailable, "The assistant cannot answer right now.", true)
	default:
		e.log.WarnContext(ctx, "model failed", "requestId", t.req.ID, "tenant", t.req.Tenant.Key, "err", err)
		t.fail(CodeModelError, "The assistant could not answer.", true)
	}
}

// modelStep runs one completion, streaming its text out as speak events as it arrives.
func (e *Engine) modelStep(ctx context.Context, t *turn, mreq *ModelRequest) (string, []ToolCall, FinishReason, error) {
	st := &t.step
	*st = step{ctx: ctx}
	st.text.Grow(speakReserve)
	if e.obs.ModelCall != nil || t.call != nil {
		st.start = e.now()
	}
	// An explicit yield function rather than a range-over-func loop, whose variables would all
	// move to the heap.
	e.model.Stream(ctx, mreq)(func(ev ModelEvent, err error) bool { return e.onModelEvent(t, ev, err) })
	if st.err == nil && t.held != "" {
		st.err = e.speakDelta(t, "", false) // what was held back
	}
	err := st.err
	if err == nil {
		err = ctx.Err()
	}
	if e.obs.ModelCall != nil || t.call != nil {
		e.meterModelCall(ctx, t, mreq, err)
	}
	if err != nil {
		return "", nil, "", err
	}
	return st.text.String(), st.calls, st.finish, nil
}

// meterModelCall counts what the step's call of the model cost, for the turn's budget and the
// Observer.
func (e *Engine) meterModelCall(ctx context.Context, t *turn, mreq *ModelRequest, err error) {
	st := &t.step
	start := st.start
	ev := ModelCallEvent{RequestID: t.req.ID, Tenant: t.req.Tenant.Key, Environment: t.req.Environment.Name,
		TurnID: t.turnID, SessionID: t.sessionID, User: t.userKey, Step: t.steps, Outcome: "ok", Finish: st.finish,
		Usage: st.usage, Model: st.model, Retries: st.retries, Duration: e.now().Sub(start)}
	if !st.firstOutput.IsZero() {
		ev.FirstOutput = st.firstOutput.Sub(start)
	}
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded):
		ev.Outcome = "timeout"
	case errors.Is(err, errClientGone) || errors.Is(err, context.Canceled):
		ev.Outcome = "cancelled"
	default:
		ev.Outcome = "error"
	}
	if !ev.Usage.Reported {
		in := promptBytes(mreq)
		out := st.text.Len()
		for _, c := range st.calls {
			out += len(c.Name) + len(c.Arguments)
		}
		ev.Estimated = Usage{InputTokens: (in + 3) / 4, OutputTokens: (out + 3) / 4}
	}
	t.tokens += int64(ev.Usage.InputTokens + ev.Usage.OutputTokens + ev.Estimated.InputTokens + ev.Estimated.OutputTokens)
	if e.obs.ModelCall != nil {
		e.obs.ModelCall(ctx, ev)
	}
}

// step is what the running completion of a turn produced so far.
type step struct {
	ctx     context.Context
	text    strings.Builder
	calls   []ToolCall
	finish  FinishReason
	usage   Usage
	model   string
	retries int
	err     error // the model's failure, or errClientGone
	// start and firstOutput time the call, when the Observer asks (ModelCall).
	start, firstOutput time.Time
}

// onModelEvent handles one event of the running completion, and reports whether to go on.
func (e *Engine) onModelEvent(t *turn, ev ModelEvent, err error) bool {
	st := &t.step
	if err != nil {
		st.err = err
		return false
	}
	if err := st.ctx.Err(); err != nil {
		st.err = err // a model that ignores its context still stops at the deadline
		return false
	}
	if !st.start.IsZero() && st.firstOutput.IsZero() && (ev.Kind == EventText || ev.Kind == EventToolCall) {
		st.firstOutput = e.now()
	}
	switch ev.Kind {
	case EventText:
		if ev.Text == "" {
			break // "" flushes held speech
		}
		st.text.WriteString(ev.Text)
		if err := e.speakDelta(t, ev.Text, st.text.Len() == len(ev.Text)); err != nil {
			st.err = err
			return false
		}
	case EventToolCall:
		c := ev.ToolCall
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d_%d", t.steps, len(st.calls))
		}
		if len(c.Arguments) == 0 {
			c.Arguments = json.RawMessage(`{}`)
		}
		if len(st.calls) == maxCallsPerStep {
			st.err = fmt.Errorf("the model asked for more than %d tool calls at once", maxCallsPerStep)
			return false
		}
		st.calls = append(st.calls, c)
	case EventFinish:
		st.finish, st.usage, st.model, st.retries = ev.Finish, ev.Usage, ev.Model, ev.Retries
	}
	return true
}

// speakDelta sends text as a speak event. In voice mode markup is removed first. The first
// delta of a later step is separated from what was already said by a space.
func (e *Engine) speakDelta(t *turn, delta string, firstOfStep bool) error {
	if t.mode == ModeVoice {
		delta = verbalize.Plain(delta, &t.lineStart)
	}
	if delta == "" && t.held == "" {
		return nil
	}
	if firstOfStep {
		delta = verbalize.JoinStep(t.speak.String(), delta)
	}
	if t.shield != nil {
		// A placeholder or number cut between deltas is masked once whole.
		if delta, t.held = verbalize.Hold(t.held+delta, delta == ""); delta == "" {
			return nil
		}
		delta = t.shield.ToUser(delta)
	}
	t.speak.WriteString(delta)
	if err := t.out.Speak(delta); err != nil {
		return errClientGone
	}
	if !t.spoke {
		t.spoke = true
		if e.obs.FirstSpeak != nil && t.ctx != nil {
			e.obs.FirstSpeak(t.ctx, t.event(), e.now().Sub(t.started))
		}
	}
	return nil
}

func (e *Engine) speakLine(t *turn, line string) { _ = e.speakDelta(t, line, true) }

// toUser masks what the user is shown, under a Shield.
func (t *turn) toUser(s string) string {
	if t.shield == nil {
		return s
	}
	return t.shield.ToUser(s)
}

// fail records a failure: the stream gets an error event, then the apology's deltas and done.
func (t *turn) fail(code, message string, retryable bool) {
	if t.errCode != "" {
		return
	}
	t.errCode = code
	t.out.Fail(code, message, retryable)
}

// finishTurn sends the widgets and then done with the assembled spec.
func (e *Engine) finishTurn(t *turn) {
	spec := widgets.Spec{
		Speak: t.speak.String(), Widgets: t.widgets, Follow: t.follow, Suggestions: t.suggestions,
		Meta: widgets.Meta{ConversationID: t.conversationID, TurnID: t.turnID, Locale: t.locale, Direction: Direction(t.locale)},
	}
	if t.heard {
		spec.Meta.Transcript = t.toUser(t.transcript)
	}
	if t.mode == ModeHome {
		spec.Meta.Theme = t.req.Tenant.Theme
	}
	if t.errCode == "" && e.guardSpec(t, &spec) != nil {
		t.fail(CodeInternal, "The engine failed.", false)
	}
	if t.errCode != "" {
		// The apology is spoken as deltas like any answer, so that a client that plays the
		// deltas hears it and the joined deltas still equal done's speak. No widget of a
		// half-finished answer (a confirm least of all) is drawn.
		if e.speakDelta(t, verbalize.ApologyAfter(t.speak.String(), locale.Apology(t.locale)), false) != nil {
			return
		}
		spec = widgets.Spec{Speak: t.speak.String(), Meta: spec.Meta}
		spec.Meta.Error = t.errCode
	}
	for _, w := range spec.Widgets {
		if t.out.Widget(w) != nil {
			return
		}
	}
	_ = t.out.Done(spec)
}
