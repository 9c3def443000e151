package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/audio"
	"github.com/convengine/engine/widgets"
)

// RunnerOptions configure a [Runner]. Config is required.
type RunnerOptions struct {
	// Config builds the configuration of an engine: the tenants, model, tools and speech the
	// scenarios run with. It is called once to check the scenarios, then once for each
	// scenario, whose engine is its own; done, when not nil, releases what the configuration
	// holds (its backends) once the scenario is over. It is called from many goroutines at
	// once.
	Config func(ctx context.Context) (cfg engine.Config, done func() error, err error)
	// ModelFor, when set, gives the model of a scenario instead of the configuration's
	// (nil model: the configuration's); finish, when not nil, is called once the scenario is
	// over, and its error fails the scenario (a model tape that was not played to its end).
	ModelFor func(s *Scenario) (m engine.Model, finish func() error, err error)
	// Judge decides a turn's free-text criterion (expect.judge) on the conversation so far.
	// Nil: such criteria are reported as skipped.
	Judge func(ctx context.Context, criterion, conversation string) (pass bool, reason string, err error)
	// Enrol enrols a test device's key for a scenario's user with the tenant's backend, the
	// way that backend enrols devices (for the demo bank: a one-time code, then POST /devices),
	// before a scenario that confirms an action on a tenant requiring device proofs creates its
	// device-bound session. Nil: such scenarios run without a device, and their confirms are
	// refused (device_proof_required).
	Enrol func(ctx context.Context, e *Enrolment) error
	// Parallel bounds the scenarios that run at once; 0 means GOMAXPROCS.
	Parallel int
	// TurnTimeout bounds each turn and each confirm; 0 means 2 minutes.
	TurnTimeout time.Duration
	// Progress, when set, is called as each scenario ends, from one goroutine at a time.
	Progress func(done, total int, r *Result)
}

// Enrolment is a test device to enrol for a scenario's user.
type Enrolment struct {
	Tenant      *engine.Tenant
	Environment *engine.Environment
	// UserToken is the scenario's user.
	UserToken engine.Secret
	// PublicKey is the public JWK of the key that signs the device's action proofs.
	PublicKey json.RawMessage
}

// Runner runs scenarios on engines built from its options. Its methods may be called from
// many goroutines at once.
type Runner struct {
	opts RunnerOptions
}

// ErrNoConfig is returned by [NewRunner] without RunnerOptions.Config.
var ErrNoConfig = errors.New("scenario: RunnerOptions.Config is required")

// NewRunner returns a runner.
func NewRunner(opts *RunnerOptions) (*Runner, error) {
	if opts == nil || opts.Config == nil {
		return nil, ErrNoConfig
	}
	r := &Runner{opts: *opts}
	if r.opts.Parallel <= 0 {
		r.opts.Parallel = runtime.GOMAXPROCS(0)
	}
	if r.opts.TurnTimeout <= 0 {
		r.opts.TurnTimeout = 2 * time.Minute
	}
	return r, nil
}

// Check checks what the scenarios need of the engine: their tenants and environments, the
// tools they name (the tenant's tools and actions), the widget types (the built-in ones and
// the configuration's Widgets), and speech for audio turns. The error joins every problem
// found, as FILE:LINE: scenario "NAME": turn N: what, wrapping [ErrInvalid].
func (r *Runner) Check(ctx context.Context, scenarios []*Scenario) error {
	cfg, done, err := r.opts.Config(ctx)
	if err != nil {
		return fmt.Errorf("scenario: building the engine's configuration: %w", err)
	}
	if done != nil {
		defer done()
	}
	known := []string{widgets.TypeStat, widgets.TypeList, widgets.TypeProgress, widgets.TypeConfirm}
	for _, w := range cfg.Widgets {
		known = append(known, w.Type)
	}
	var errs []error
	tools := map[string][]string{} // by tenant and environment
	voices := map[string]error{}   // what speaking in each voice came to
	for _, s := range scenarios {
		fail := func(line int, turn int, format string, args ...any) {
			where := fmt.Sprintf("scenario %q: ", s.Name)
			if turn > 0 {
				where += fmt.Sprintf("turn %d: ", turn)
			}
			errs = append(errs, fmt.Errorf("%w: %s:%d: %s%s", ErrInvalid, s.File, line, where, fmt.Sprintf(format, args...)))
		}
		t, err := cfg.Tenants.Tenant(ctx, s.Tenant)
		if err != nil {
			fail(s.Line, 0, "tenant %q: %v", s.Tenant, err)
			continue
		}
		env := t.Environments[s.Environment]
		if env == nil {
			fail(s.Line, 0, "tenant %q has no %s environment", s.Tenant, s.Environment)
			continue
		}
		key := s.Tenant + "\x00" + s.Environment
		names, ok := tools[key]
		if !ok {
			if names, err = tenantTools(ctx, cfg.Toolset, t, env); err != nil {
				fail(s.Line, 0, "listing the tools of tenant %q: %v", s.Tenant, err)
				continue
			}
			tools[key] = names
		}
		for i, turn := range s.Turns {
			e := &turn.Expect
			for _, name := range e.Tools {
				if !slices.Contains(names, name) {
					fail(e.line("tools", turn.Line), i+1, "expect.tools: tenant %q has no tool %q (it has %s)", s.Tenant, name, strings.Join(names, ", "))
				}
			}
			for _, c := range e.ToolCalls {
				if !slices.Contains(names, c.Name) {
					fail(c.Line, i+1, "expect.tool_calls: tenant %q has no tool %q (it has %s)", s.Tenant, c.Name, strings.Join(names, ", "))
				}
			}
			for _, w := range e.Widgets {
				if !slices.Contains(known, w) {
					fail(e.line("widgets", turn.Line), i+1, "expect.widgets: the engine has no widget type %q (it has %s)", w, strings.Join(known, ", "))
				}
			}
			for _, w := range e.WidgetsContain {
				if typ, _ := w["type"].(string); typ != "" && !slices.Contains(known, typ) {
					fail(e.line("widgets_contain", turn.Line), i+1, "expect.widgets_contain: the engine has no widget type %q (it has %s)", typ, strings.Join(known, ", "))
				}
			}
			if turn.Audio && cfg.Synthesizer == nil {
				fail(turn.Line, i+1, "audio: the engine has no synthesizer to speak the turn (install espeak-ng)")
			} else if turn.Audio {
				err, tried := voices[turn.Voice]
				if !tried {
					err = canSpeak(ctx, cfg.Synthesizer, turn.Voice)
					voices[turn.Voice] = err
				}
				if err != nil {
					fail(turn.Line, i+1, "voice: the engine's synthesizer cannot speak the turn in voice %q: %v", turn.Voice, err)
				}
			}
			if turn.Audio && cfg.Transcriber == nil {
				fail(turn.Line, i+1, "audio: the engine has no transcriber to hear the turn (install pocketsphinx and pocketsphinx-en-us)")
			}
		}
	}
	return errors.Join(errs...)
}

// canSpeak says whether synth speaks in voice: a missing program (flite for its voices, in the
// reference server) or an unknown voice fails the run before it starts rather than each
// spoken turn.
func canSpeak(ctx context.Context, synth engine.Synthesizer, voice string) error {
	a, err := synth.Synthesize(ctx, "check", voice)
	if err != nil {
		return err
	}
	return a.PCM.Close()
}

// tenantTools names the tools of a tenant environment, and its actions.
func tenantTools(ctx context.Context, ts engine.Toolset, t *engine.Tenant, env *engine.Environment) ([]string, error) {
	var names []string
	if ts != nil {
		list, err := ts.Tools(ctx, &engine.ToolEnv{Tenant: t, Environment: env, RequestID: "scenario-check"})
		if err != nil {
			return nil, err
		}
		for _, tool := range list {
			names = append(names, tool.Name)
		}
	}
	for name := range t.Actions {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}

func (e *Expect) line(key string, def int) int {
	if l := e.lines[key]; l != 0 {
		return l
	}
	return def
}

// Run checks the scenarios ([Runner.Check]) and, when they hold, runs them, at most
// RunnerOptions.Parallel at once. The error is Check's; a failing scenario is a [Result] with
// failures, never an error. When ctx ends, the run stops at once: the scenarios running end
// with ctx's error between two turns or in the turn, those not started are left out, and the
// report, [Report].Interrupted, holds the scenarios that ran.
func (r *Runner) Run(ctx context.Context, scenarios []*Scenario) (*Report, error) {
	start := time.Now()
	if err := r.Check(ctx, scenarios); err != nil {
		if ctx.Err() != nil {
			return &Report{Start: start, Duration: time.Since(start), Interrupted: true, NotRun: len(scenarios)}, nil
		}
		return nil, err
	}
	rep := &Report{Start: start, Results: make([]*Result, len(scenarios))}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
	)
	sem := make(chan struct{}, r.opts.Parallel)
	for i, s := range scenarios {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			res := r.runScenario(ctx, s)
			rep.Results[i] = res
			mu.Lock()
			defer mu.Unlock()
			done++
			if r.opts.Progress != nil {
				r.opts.Progress(done, len(scenarios), res)
			}
		})
	}
	wg.Wait()
	rep.Duration = time.Since(rep.Start)
	if ctx.Err() != nil {
		rep.Interrupted = true
		ran := rep.Results[:0]
		for _, res := range rep.Results {
			if res != nil {
				ran = append(ran, res)
			}
		}
		rep.NotRun = len(scenarios) - len(ran)
		rep.Results = ran
	}
	return rep, nil
}

// run is one scenario's conversation.
type run struct {
	r       *Runner
	s       *Scenario
	cfg     engine.Config
	eng     *engine.Engine
	rec     *recorder
	models  *modelRecorder // nil without a model in the configuration
	caller  engine.Caller
	device  *testDevice
	history []engine.Message
	convID  string
	res     *Result
	// tools are the tenant's, by name.
	tools map[string]engine.Tool
}

func (r *Runner) runScenario(ctx context.Context, s *Scenario) (res *Result) {
	res = &Result{Scenario: s}
	start := time.Now()
	defer func() {
		if v := recover(); v != nil {
			res.Err = fmt.Errorf("the scenario panicked: %v", v)
		}
		res.Duration = time.Since(start)
	}()
	cfg, done, err := r.opts.Config(ctx)
	if err != nil {
		res.Err = fmt.Errorf("building the engine's configuration: %w", err)
		return res
	}
	if done != nil {
		defer func() {
			if err := done(); err != nil && res.Err == nil {
				res.Err = fmt.Errorf("releasing the engine's configuration: %w", err)
			}
		}()
	}
	if r.opts.ModelFor != nil {
		m, finish, err := r.opts.ModelFor(s)
		if err != nil {
			res.Err = fmt.Errorf("the scenario's model: %w", err)
			return res
		}
		if m != nil {
			cfg.Model = m
		}
		if finish != nil {
			defer func() {
				if err := finish(); err != nil {
					res.Failures = append(res.Failures, &Failure{Field: "model", Expected: "the model's traffic played to its end", Got: err.Error()})
				}
			}()
		}
	}
	rn := &run{r: r, s: s, res: res}
	if cfg.Model != nil {
		cfg.Model, rn.models = recordModel(cfg.Model)
	}
	if cfg.Toolset != nil {
		rn.rec = newRecorder(cfg.Toolset)
		cfg.Toolset = rn.rec
	} else {
		rn.rec = newRecorder(nil)
	}
	rn.cfg = cfg
	if rn.eng, err = engine.New(cfg); err != nil {
		res.Err = fmt.Errorf("starting the engine: %w", err)
		return res
	}
	defer rn.eng.Close()
	rn.caller = engine.Caller{EngineKey: s.Tenant, UserToken: s.User, Environment: s.Environment}
	if err := rn.session(ctx); err != nil {
		res.Err = err
		return res
	}
	for i, t := range s.Turns {
		if ctx.Err() != nil {
			res.Err = fmt.Errorf("interrupted before turn %d: %w", i+1, ctx.Err())
			break
		}
		tr := rn.turn(ctx, i, t)
		res.Turns = append(res.Turns, tr)
		if ctx.Err() != nil { // the turn was cut short: what it came to says nothing
			res.Err = fmt.Errorf("interrupted in turn %d: %w", i+1, ctx.Err())
			break
		}
		res.Failures = append(res.Failures, tr.Failures...)
	}
	return res
}

// session creates the scenario's session when its tenant needs one: device-bound, with an
// enrolled test device, on a tenant that requires device proofs and a scenario that confirms.
func (rn *run) session(ctx context.Context) error {
	t, err := rn.cfg.Tenants.Tenant(ctx, rn.s.Tenant)
	if err != nil {
		return fmt.Errorf("tenant %q: %w", rn.s.Tenant, err)
	}
	rn.tools = map[string]engine.Tool{}
	if rn.cfg.Toolset != nil {
		list, _ := rn.cfg.Toolset.Tools(ctx, &engine.ToolEnv{Tenant: t, Environment: t.Environments[rn.s.Environment], RequestID: "scenario-tools"})
		for _, tool := range list {
			rn.tools[tool.Name] = tool
		}
	}
	confirms := slices.ContainsFunc(rn.s.Turns, func(t *Turn) bool { return t.Confirm != nil })
	in := &engine.SessionInput{}
	switch {
	case t.RequireActionProof && confirms && rn.r.opts.Enrol != nil:
		if rn.device, err = newTestDevice(); err != nil {
			return fmt.Errorf("making a test device: %w", err)
		}
		gate := rn.device.gateJWK
		if err := rn.r.opts.Enrol(ctx, &Enrolment{Tenant: t, Environment: t.Environments[rn.s.Environment],
			UserToken: engine.Secret(rn.s.User), PublicKey: gate}); err != nil {
			return fmt.Errorf("enrolling a test device with the tenant's backend: %w", err)
		}
		in.PublicKey, in.GateKey = rn.device.keyJWK, gate
	case t.RequireSession:
	default:
		return nil
	}
	c := rn.caller
	c.RequestID = "scenario-session"
	info, err := rn.eng.CreateSession(ctx, &c, in)
	if err != nil {
		return fmt.Errorf("creating the scenario's session: %w", err)
	}
	rn.caller.SessionID = info.ID
	return nil
}

// maxHistory is how many earlier messages a turn carries, as the reference web client sends.
const maxHistory = 20

func (rn *run) turn(ctx context.Context, i int, t *Turn) *TurnResult {
	tr := &TurnResult{Turn: i + 1, Say: t.Say}
	locale := t.Locale
	if locale == "" {
		locale = rn.s.Locale
	}
	c := rn.caller
	c.RequestID = fmt.Sprintf("scenario-turn-%d", i+1)
	in := &engine.TurnInput{ConversationID: rn.convID, Locale: locale,
		Messages: rn.history[max(0, len(rn.history)-maxHistory):]}
	tctx, cancel := context.WithTimeout(ctx, rn.r.opts.TurnTimeout)
	defer cancel()
	if t.Audio {
		samples, err := rn.speak(tctx, &c, t.Say, t.Voice)
		if err != nil {
			tr.fail("audio", "the turn spoken by the engine's synthesizer", err.Error())
			return tr
		}
		in.Samples = samples
	} else {
		in.Transcript = t.Say
	}
	begin := time.Now()
	var speech strings.Builder
	for ev, err := range rn.eng.Turn(tctx, &c, in) {
		var failed *engine.TurnError
		if errors.As(err, &failed) {
			break // its error event is recorded
		}
		if err != nil {
			var p *engine.Problem
			if errors.As(err, &p) {
				tr.Error, tr.ErrorMessage = p.Code, p.Detail
			} else {
				tr.Error, tr.ErrorMessage = "internal", err.Error()
			}
			tr.Events = append(tr.Events, "problem "+tr.Error+": "+tr.ErrorMessage)
			break
		}
		if ev.Type != engine.EventSpeak && speech.Len() > 0 {
			tr.Events = append(tr.Events, "speak "+quote(speech.String()))
			speech.Reset()
		}
		switch ev.Type {
		case engine.EventStart:
			if ev.ConversationID != "" {
				rn.convID = ev.ConversationID
			}
		case engine.EventStatus:
			tr.Events = append(tr.Events, "status "+ev.Tool+" "+quote(ev.Status))
		case engine.EventSpeak:
			speech.WriteString(ev.Delta)
		case engine.EventWidget:
			tr.Events = append(tr.Events, "widget "+ev.Widget.WidgetType()+" "+string(compactWidget(ev.Widget)))
		case engine.EventError:
			tr.Error, tr.ErrorMessage = ev.Error.Code, ev.Error.Message
			tr.Events = append(tr.Events, "error "+ev.Error.Code+": "+ev.Error.Message)
		case engine.EventDone:
			tr.Latency = time.Since(begin)
			tr.Spec = ev.Spec
			tr.Events = append(tr.Events, "done")
		}
	}
	if tr.Spec == nil && tr.Error == "" {
		tr.Error = "no_done"
		tr.ErrorMessage = fmt.Sprintf("the turn did not end within %v", rn.r.opts.TurnTimeout)
		tr.Events = append(tr.Events, "no done event: "+tr.ErrorMessage)
	}
	tr.ToolCalls = rn.rec.take(c.RequestID)
	if rn.models != nil {
		tr.modelSaw = rn.models.take()
	}
	if tr.Spec != nil {
		tr.Speech, tr.Locale, tr.Transcript = tr.Spec.Speak, tr.Spec.Meta.Locale, tr.Spec.Meta.Transcript
		for _, w := range tr.Spec.Widgets {
			if cw, ok := w.(widgets.Confirm); ok {
				tr.ToolCalls = append(tr.ToolCalls, ToolCall{Name: cw.Execute.Tool, Arguments: compactJSON(cw.Execute.Arguments), Proposed: true})
			}
		}
	}
	for _, call := range tr.ToolCalls {
		verb := "tool "
		if call.Proposed {
			verb = "proposed "
		}
		tr.Events = append(tr.Events, verb+call.Name+" "+string(call.Arguments))
	}
	said := t.Say
	if t.Audio {
		said = tr.Transcript
	}
	if said != "" {
		rn.history = append(rn.history, engine.Message{Role: engine.RoleUser, Content: said})
	}
	if tr.Speech != "" {
		rn.history = append(rn.history, engine.Message{Role: engine.RoleAssistant, Content: tr.Speech})
	}
	tr.Failures = check(t, tr, rn.tools)
	if t.Confirm != nil {
		rn.confirm(ctx, i, t, tr, locale)
	}
	if t.Expect.Judge != "" {
		rn.judge(ctx, t, tr)
	}
	for _, f := range tr.Failures {
		f.Turn, f.Say = tr.Turn, tr.Say
	}
	return tr
}

// speak synthesizes what the user says as 16 kHz samples, in the turn's voice.
func (rn *run) speak(ctx context.Context, c *engine.Caller, text, voice string) ([]int16, error) {
	a, err := rn.eng.Synthesize(ctx, c, text, voice)
	if err != nil {
		return nil, err
	}
	defer a.PCM.Close()
	b, err := io.ReadAll(a.PCM)
	if err != nil {
		return nil, err
	}
	return audio.Resample(audio.PCMFromBytes(b), a.SampleRate, 16000), nil
}

// confirm executes the turn's confirm widget as the device would once its gate passed.
func (rn *run) confirm(ctx context.Context, i int, t *Turn, tr *TurnResult, locale string) {
	step := t.Confirm
	cr := &ConfirmResult{Method: step.Method}
	tr.Confirm = cr
	var cw *widgets.Confirm
	if tr.Spec != nil {
		for _, w := range tr.Spec.Widgets {
			if c, ok := w.(widgets.Confirm); ok {
				cw = &c
				break
			}
		}
	}
	if cw == nil {
		tr.fail("confirm", "a confirm widget to execute", "none")
		return
	}
	c := rn.caller
	c.RequestID = fmt.Sprintf("scenario-turn-%d-confirm", i+1)
	verified, _ := json.Marshal(time.Now().UTC().Format(time.RFC3339Nano))
	in := &engine.ExecuteInput{Execute: cw.Execute, Method: step.Method, VerifiedAtJSON: verified, Locale: locale}
	if rn.device != nil {
		proof, err := rn.device.actionProof(cw.Execute.Token, step.Method, verified, time.Now())
		if err != nil {
			tr.fail("confirm", "a signed device proof", err.Error())
			return
		}
		in.Proof = proof
	}
	cctx, cancel := context.WithTimeout(ctx, rn.r.opts.TurnTimeout)
	defer cancel()
	res, err := rn.eng.Execute(cctx, &c, in)
	calls := rn.rec.take(c.RequestID)
	switch {
	case err != nil:
		cr.Status = StatusFailed
		var p *engine.Problem
		if errors.As(err, &p) {
			cr.Error, cr.ErrorMessage = p.Code, p.Detail
		} else {
			cr.Error, cr.ErrorMessage = "internal", err.Error()
		}
	case res.Done.Type == "success":
		cr.Status = StatusDone
	case slices.ContainsFunc(calls, func(c ToolCall) bool { return c.IsError }):
		cr.Status = StatusDeclined
	default:
		cr.Status = StatusFailed
	}
	if res != nil {
		cr.Speech = res.Speak
		cr.Card = strings.Join(nonEmpty(res.Done.Title, res.Done.Line1, res.Done.Line2), " · ")
		if res.Speak != "" {
			rn.history = append(rn.history, engine.Message{Role: engine.RoleAssistant, Content: res.Speak})
		}
	}
	tr.Events = append(tr.Events, "confirm "+step.Method+": "+cr.describe())
	tr.Failures = append(tr.Failures, checkConfirm(step, cr)...)
}

// judge asks the judge about the turn's criterion, on the conversation so far.
func (rn *run) judge(ctx context.Context, t *Turn, tr *TurnResult) {
	v := &Verdict{Criterion: t.Expect.Judge}
	tr.Judge = v
	if rn.r.opts.Judge == nil {
		v.Skipped = true
		return
	}
	var conv strings.Builder
	for _, m := range rn.history {
		role := "User"
		if m.Role == engine.RoleAssistant {
			role = "Assistant"
		}
		fmt.Fprintf(&conv, "%s: %s\n", role, m.Content)
	}
	jctx, cancel := context.WithTimeout(ctx, rn.r.opts.TurnTimeout)
	defer cancel()
	pass, reason, err := rn.r.opts.Judge(jctx, t.Expect.Judge, conv.String())
	v.Pass, v.Reason = pass, reason
	switch {
	case err != nil:
		v.Reason = "the judge failed: " + err.Error()
		tr.fail("judge", quote(t.Expect.Judge), v.Reason)
	case !pass:
		tr.fail("judge", quote(t.Expect.Judge), "not met: "+reason)
	}
}

func nonEmpty(s ...string) []string {
	return slices.DeleteFunc(s, func(x string) bool { return x == "" })
}
