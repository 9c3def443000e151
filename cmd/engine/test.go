package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/internal/judge"
	"github.com/convengine/engine/internal/modeltape"
	"github.com/convengine/engine/openai"
	"github.com/convengine/engine/pii"
	"github.com/convengine/engine/scenario"
)

// Exit statuses of the test command.
const (
	exitPass        = 0
	exitFail        = 1 // a scenario failed
	exitBadInput    = 2 // flags, scenario files, or what the scenarios ask of the engine
	exitInterrupted = 3 // SIGINT or SIGTERM ended the run
)

const testUsage = `usage: engine test [flags] PATH...

Runs the conversation scenarios of PATH (scenario files, or folders of them) against the
demo tenants (pk_demo, pk_demo_proof), or the tenants of -tenants, in-process. See
docs/testing-tenants.md. Exit status: 0 all passed, 1 a scenario failed, 2 bad input,
3 interrupted (SIGINT, SIGTERM: the scenarios that ran are reported).

`

// testOptions are the test command's flags.
type testOptions struct {
	junit, json, run, tenants, speech, logLevel string
	record, live                                bool
	parallel                                    int
	turnTimeout                                 time.Duration
	paths                                       []string
}

func parseTestFlags(args []string, getenv func(string) string, stderr io.Writer) (testOptions, error) {
	var o testOptions
	fs := flag.NewFlagSet("engine test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, testUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.junit, "junit", "", "write a JUnit XML report to FILE")
	fs.StringVar(&o.json, "json", "", "write a JSON report to FILE")
	fs.StringVar(&o.run, "run", "", "run only the scenarios whose name or a tag matches REGEXP")
	fs.BoolVar(&o.record, "record", false, "answer with the OpenAI-compatible model (OPENAI_BASE_URL, OPENAI_API_KEY, ENGINE_MODEL) and record its traffic to each scenario's tape")
	fs.BoolVar(&o.live, "live", false, "answer with the OpenAI-compatible model, no tape; with ENGINE_JUDGE_MODEL, judge the judge: criteria")
	fs.IntVar(&o.parallel, "parallel", 0, "scenarios run at once (0: GOMAXPROCS)")
	fs.DurationVar(&o.turnTimeout, "turn-timeout", 2*time.Minute, "bound on each turn and each confirm")
	fs.StringVar(&o.tenants, "tenants", "", "tenants file, YAML or JSON, instead of the demo tenants")
	fs.StringVar(&o.speech, "speech", envOr(getenv, "ENGINE_SPEECH", "auto"), "auto: espeak-ng and pocketsphinx when installed; off: no speech (ENGINE_SPEECH)")
	fs.StringVar(&o.logLevel, "log-level", "warn", "the engine's log on stderr: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.paths = fs.Args()
	switch {
	case len(o.paths) == 0:
		fs.Usage()
		return o, errors.New("no scenario file or folder given")
	case o.record && o.live:
		return o, errors.New("-record and -live exclude each other: -record records the live model's traffic to tapes")
	case o.parallel < 0:
		return o, errors.New("-parallel cannot be negative")
	}
	return o, nil
}

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

// testCommand runs `engine test`. SIGINT or SIGTERM stops the run at once, with the report of
// the scenarios that ran; a second signal ends the process.
func testCommand(args []string, getenv func(string) string, stdout, stderr io.Writer, terminal bool) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	return runTest(ctx, args, getenv, stdout, stderr, terminal)
}

// runTest runs `engine test` and returns its exit status. terminal says whether stdout is a
// terminal, which gets a progress line instead of a line per scenario.
func runTest(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, terminal bool) int {
	bad := func(err error) int {
		fmt.Fprintln(stderr, "engine test:", err)
		return exitBadInput
	}
	opts, err := parseTestFlags(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitPass
	}
	if err != nil {
		return bad(err)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(opts.logLevel)); err != nil {
		return bad(fmt.Errorf("-log-level: %q is not debug, info, warn or error", opts.logLevel))
	}
	privacy, err := pii.NewPrivacy(nil)
	if err != nil {
		return bad(err)
	}
	log := slog.New(logHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}), privacy))

	list, err := scenario.Load(opts.paths...)
	if err != nil {
		return bad(err)
	}
	if opts.run != "" {
		re, err := regexp.Compile(opts.run)
		if err != nil {
			return bad(fmt.Errorf("-run: %w", err))
		}
		var kept []*scenario.Scenario
		for _, s := range list {
			if re.MatchString(s.Name) || matchesTag(re, s.Tags) {
				kept = append(kept, s)
			}
		}
		if len(kept) == 0 {
			return bad(fmt.Errorf("-run %q matches no scenario", opts.run))
		}
		list = kept
	}

	tc, err := newTestConfig(ctx, opts, getenv, privacy, log)
	if err != nil {
		return bad(err)
	}
	defer tc.close()
	runner, err := scenario.NewRunner(&scenario.RunnerOptions{
		Config:      tc.config,
		ModelFor:    tc.modelFor,
		Enrol:       tc.enrolFor(),
		Judge:       tc.judge,
		Parallel:    opts.parallel,
		TurnTimeout: opts.turnTimeout,
		Progress:    scenario.Progress(stdout, terminal),
	})
	if err != nil {
		return bad(err)
	}
	rep, err := runner.Run(ctx, list)
	if err != nil {
		return bad(err)
	}
	if err := rep.WriteSummary(stdout); err != nil {
		return bad(err)
	}
	for _, w := range []struct {
		path  string
		write func(io.Writer) error
	}{{opts.junit, rep.WriteJUnit}, {opts.json, rep.WriteJSON}} {
		if w.path == "" {
			continue
		}
		var b bytes.Buffer
		if err := w.write(&b); err != nil {
			return bad(err)
		}
		if err := os.WriteFile(w.path, b.Bytes(), 0o644); err != nil {
			return bad(err)
		}
	}
	if rep.Interrupted {
		fmt.Fprintln(stderr, "engine test: interrupted")
		return exitInterrupted
	}
	if _, failed, _ := rep.Counts(); failed > 0 {
		return exitFail
	}
	return exitPass
}

func matchesTag(re *regexp.Regexp, tags []string) bool {
	for _, t := range tags {
		if re.MatchString(t) {
			return true
		}
	}
	return false
}

// testConfig builds the engines of the test command: the server's configuration
// (engineConfig), with a fresh demo, banks and all, for each scenario, so that scenarios share
// no user, balance or session.
type testConfig struct {
	opts    testOptions
	getenv  func(string) string
	log     *slog.Logger
	privacy *pii.Privacy // each tenant's policy, as the server applies it
	key     []byte
	intents *intent.Model
	router  *modelRouter
	chosen  models
	tools   engine.Toolset
	closeTS func()
	// tenants is the tenants file's store; nil for the demo.
	tenants engine.TenantStore
	// live is the OpenAI-compatible model of -live.
	live engine.Model
	// codes are the one-time codes each running demo's proof bank sent, by bank URL.
	codes sync.Map // string → *codeBox
	judge func(ctx context.Context, criterion, conversation string) (bool, string, error)
}

func newTestConfig(ctx context.Context, opts testOptions, getenv func(string) string, privacy *pii.Privacy, log *slog.Logger) (*testConfig, error) {
	tc := &testConfig{opts: opts, getenv: getenv, log: log, privacy: privacy, intents: intent.New(nil)}
	key, _, err := signingKey(getenv("ENGINE_SIGNING_KEY"))
	if err != nil {
		return nil, err
	}
	tc.key = key
	// The server's model unless a flag says otherwise: the intent model offline, or the
	// OpenAI-compatible model the environment configures.
	if tc.chosen, err = chooseModels(getenv, tc.intents, log); err != nil {
		return nil, err
	}
	if opts.record || opts.live {
		if getenv("OPENAI_API_KEY") == "" && getenv("OPENAI_BASE_URL") == "" {
			return nil, errors.New("-record and -live need a model: set OPENAI_BASE_URL (a compatible server) or OPENAI_API_KEY")
		}
	}
	if opts.live {
		tc.live = tc.chosen.model
		if tc.judge, err = newJudge(getenv); err != nil {
			return nil, err
		}
	}
	if err := tc.chosen.addSpeech(opts.speech, log); err != nil {
		return nil, err
	}
	events := &breakerEvents{log: log}
	tc.router = newModelRouter(tc.chosen.model, tc.intents, events)
	tc.tools, tc.closeTS = newToolset(events)
	if opts.tenants != "" {
		if tc.tenants, err = loadTenants(opts.tenants, getenv, tc.intents, tc.router, privacy, log); err != nil {
			tc.closeTS()
			return nil, err
		}
	}
	return tc, nil
}

func (tc *testConfig) close() { tc.closeTS() }

// config is RunnerOptions.Config: the server's engine configuration, over a demo of its own.
func (tc *testConfig) config(ctx context.Context) (engine.Config, func() error, error) {
	if tc.tenants != nil {
		return engineConfig(tc.tenants, tc.router, tc.tools, tc.chosen, tc.key, tc.privacy, tc.log, false), nil, nil
	}
	box := &codeBox{codes: map[string]string{}}
	d, err := startDemo(tc.log, box, nil)
	if err != nil {
		return engine.Config{}, nil, err
	}
	for _, u := range d.proofBanks {
		tc.codes.Store(u, box)
	}
	done := func() error {
		for _, u := range d.proofBanks {
			tc.codes.Delete(u)
		}
		return d.Close()
	}
	if err := checkTenants([]*engine.Tenant{d.tenant, d.proof}, tc.intents); err != nil {
		done()
		return engine.Config{}, nil, fmt.Errorf("demo tenant: %w", err)
	}
	tc.privacy.Know(d.tenant, d.proof) // checked above
	tenants, err := engine.NewStaticTenants(d.tenant, d.proof)
	if err != nil {
		done()
		return engine.Config{}, nil, err
	}
	return engineConfig(tenants, tc.router, tc.tools, tc.chosen, tc.key, tc.privacy, tc.log, true), done, nil
}

// modelFor is RunnerOptions.ModelFor: -live's model; with -record, the OpenAI-compatible model
// recording to the scenario's tape; else, when the scenario has a tape, the tape replayed
// offline; else the server's model.
func (tc *testConfig) modelFor(s *scenario.Scenario) (engine.Model, func() error, error) {
	tape := s.TapePath()
	var (
		transport http.RoundTripper
		finish    func() error
	)
	switch {
	case tc.opts.live:
		return tc.live, nil, nil
	case tc.opts.record:
		rec := modeltape.Record(tape, http.DefaultTransport)
		transport, finish = rec, rec.Close
	default:
		if _, err := os.Stat(tape); err != nil {
			return nil, nil, nil
		}
		p, err := modeltape.Open(tape)
		if err != nil {
			return nil, nil, err
		}
		transport, finish = p, p.Close
	}
	o := openaiOptions(tc.getenv)
	o.HTTPClient = &http.Client{Transport: transport}
	m, err := openai.NewModel(o)
	if err != nil {
		finish()
		return nil, nil, err
	}
	return m, finish, nil
}

// enrolFor is RunnerOptions.Enrol for the demo: the proof bank's enrolment, a one-time code
// sent to the user (here, read from what the bank sent), then the code with the key. With a
// tenants file, none: its backends enrol devices their own way.
func (tc *testConfig) enrolFor() func(ctx context.Context, e *scenario.Enrolment) error {
	if tc.tenants != nil {
		return nil
	}
	return func(ctx context.Context, e *scenario.Enrolment) error {
		bank := e.Environment.BackendURL
		v, ok := tc.codes.Load(bank)
		if !ok {
			return fmt.Errorf("tenant %q: its bank sends no enrolment codes here", e.Tenant.Key)
		}
		box := v.(*codeBox)
		if err := postBank(ctx, bank+"/devices/code", e.UserToken, map[string]any{"public_key": e.PublicKey}, http.StatusAccepted); err != nil {
			return err
		}
		code, err := box.wait(ctx, demobank.UserLabel(e.UserToken.Reveal()))
		if err != nil {
			return err
		}
		return postBank(ctx, bank+"/devices", e.UserToken, map[string]any{"code": code, "public_key": e.PublicKey}, http.StatusCreated)
	}
}

func postBank(ctx context.Context, url string, token engine.Secret, body any, want int) error {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(raw))
	if err != nil {
		return err
	}
	req.Header.Set("X-Token", token.Reveal())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		var p struct{ Error, Message string }
		json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&p)
		return fmt.Errorf("the bank answered %s to POST %s: %s %s", resp.Status, url[strings.LastIndex(url, "/"):], p.Error, p.Message)
	}
	return nil
}

// codeBox is the console of a demo's banks: it keeps the one-time codes they send, as the
// user's phone would.
type codeBox struct {
	mu    sync.Mutex
	codes map[string]string // by user label
}

var codeLine = regexp.MustCompile(`^demo bank: one-time code for (.+): (\d+)$`)

func (b *codeBox) Write(p []byte) (int, error) {
	sc := bufio.NewScanner(bytes.NewReader(p))
	for sc.Scan() {
		if m := codeLine.FindStringSubmatch(sc.Text()); m != nil {
			b.mu.Lock()
			b.codes[m[1]] = m[2]
			b.mu.Unlock()
		}
	}
	return len(p), nil
}

// wait returns the code sent to user.
func (b *codeBox) wait(ctx context.Context, user string) (string, error) {
	for {
		b.mu.Lock()
		code := b.codes[user]
		delete(b.codes, user)
		b.mu.Unlock()
		if code != "" {
			return code, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// newJudge is the judge of -live runs: a model of the OpenAI-compatible server (OPENAI_BASE_URL,
// OPENAI_API_KEY) named by ENGINE_JUDGE_MODEL; none without it, and judge criteria are then
// reported as skipped.
func newJudge(getenv func(string) string) (func(ctx context.Context, criterion, conversation string) (bool, string, error), error) {
	name := getenv("ENGINE_JUDGE_MODEL")
	if name == "" {
		return nil, nil
	}
	j, err := judge.New(&judge.Options{BaseURL: getenv("OPENAI_BASE_URL"), APIKey: getenv("OPENAI_API_KEY"), Model: name})
	if err != nil {
		return nil, fmt.Errorf("ENGINE_JUDGE_MODEL: %w", err)
	}
	return j.Verdict, nil
}
