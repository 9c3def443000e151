// Command engineload drives a conversational engine over the wire and measures it.
//
// It speaks the engine's protocol through the Go client package (or plain HTTP with -raw):
// SSE turns (-mode turn), executes of confirm widgets (-mode execute), speech synthesis
// (-mode tts), turns on the voice socket (-mode voice, timed from end_of_speech to the first
// audio), idle voice sockets (-mode idle, the server's memory per socket). Workers (-c) run operations one after another for a duration (-d) or a count
// (-n); with -rate, operations start at a fixed rate whatever their latency (open loop), with
// at most -c in flight, and latencies count from when each was due. It reports throughput,
// errors by problem or event code, and latency percentiles (HDR histograms) of the time to the
// first speak event and to done; it writes them as JSON (-json) and charts their distribution
// as SVG (-svg).
//
// With -local it measures the engine against its limit, with nothing to set up: it starts, as
// child processes of itself, an engine serving a bench tenant whose model streams a fixed
// answer at a configured pace (-first-token, -token-interval, -deltas, -widgets, -tool-calls),
// and a bare net/http handler that writes the same bytes with none of the engine's work. It
// drives both with the same load, and reports the engine's throughput as a ratio to the bare
// handler's, the time the engine adds before the first speak (measured minus the model's
// first-token delay), and the server's CPU time, allocations and heap per operation.
//
// Several operations run at once against one server with -mode name=workers@rate,…; with
// -soak the tool then checks the server: no error but the -allow codes, its goroutines and
// live heap back to where they were (read from -stats, the reference server's -debug-addr),
// and, with -bank, every confirmed action run exactly once by the demo bank. soak.sh at the
// repository's root runs it against the reference server.
//
// Examples:
//
//	engineload -local -c 256 -d 10s -json bench.json -svg latency.svg
//	engineload -target http://127.0.0.1:8080 -key pk_demo -c 16 -n 2000
//	engineload -local -mode execute -c 8 -n 500
//	engineload -local -mode voice -c 64 -d 10s -sentences 3 -token-interval 25ms
//	engineload -local -mode idle -c 10000 -d 5s
//	engineload -target http://127.0.0.1:8080 -mode turn=1000,voice=1000@10,execute=8@5 -d 10m \
//		-soak -stats http://127.0.0.1:6060/debug/stats -bank http://127.0.0.1:41000
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "engineload:", err)
		}
		if errors.Is(err, errSoakFailed) {
			os.Exit(1)
		}
		os.Exit(2)
	}
}

// config is the command line.
type config struct {
	mode    string
	target  string
	key     string
	token   string
	staging bool
	say     string
	// actionSay asks the demo for an action, in execute mode.
	actionSay string
	turnMode  string
	voice     string
	session   bool
	bound     bool
	raw       bool

	concurrency int
	n           int
	duration    time.Duration
	rate        float64
	warmup      int
	rounds      int
	pool        int
	timeout     time.Duration

	local bool
	pid   int
	// phases are the entries of a -mode that runs several operations at once.
	phases []phaseSpec
	// runID tells this run's end users apart from earlier runs' on the same server.
	runID string
	// ledger keeps the outcome of every executed action.
	ledger *ledger

	// a soak: the server's stats and bank, the checks after the run
	stats     string
	bank      string
	soak      bool
	settle    time.Duration
	heapSlack int64
	allow     []string

	// the bench model and backend of -local
	firstToken     time.Duration
	tokenInterval  time.Duration
	deltas         int
	widgets        int
	toolCalls      int
	usage          bool // the bench engine meters usage
	chain          bool // the bench engine's model is a fallback chain, its primary the bench model
	backendLatency time.Duration
	voiceFlags

	jsonOut, svgOut        string
	cpuProfile, memProfile string
	quiet                  bool

	// serve makes the process a server of a -local run; backend is its tenant's backend.
	serve   string
	backend string
	// exe is the program started for -local servers; empty means this one.
	exe string
}

// hiddenFlags are for the servers a -local run starts, not for people.
var hiddenFlags = map[string]bool{"serve": true, "backend": true}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("engineload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.mode, "mode", "turn", "what to drive: "+modeNames()+`; several at once as name[=workers][@rate],… (e.g. "turn=1000,voice=1000@10,execute=8@5")`)
	fs.StringVar(&c.target, "target", "http://127.0.0.1:8080", "base URL of the engine")
	fs.StringVar(&c.key, "key", "pk_demo", "engine key (X-Engine-Key)")
	fs.StringVar(&c.token, "token", "load-user", "end user's token (X-Token); execute appends a suffix per action")
	fs.BoolVar(&c.staging, "staging", false, "address the tenant's staging environment (stg- request ids)")
	fs.StringVar(&c.say, "say", "what is my balance", "transcript of each turn; text of each tts request")
	fs.StringVar(&c.actionSay, "action-say", "send 20 dollars to Alex", "execute: the turn that asks for a confirm widget")
	fs.StringVar(&c.turnMode, "turn-mode", "", `turn mode field: "text" (default), "voice" or "home"`)
	fs.StringVar(&c.voice, "voice", "", "tts: voice (the tenant's default when empty)")
	fs.BoolVar(&c.session, "session", false, "create a session per worker (Bearer)")
	fs.BoolVar(&c.bound, "bound", false, "create a DPoP-bound session per worker: a proof signed for every request")
	fs.BoolVar(&c.raw, "raw", false, "turn: plain HTTP and an event scanner instead of the client package (no sessions)")
	fs.IntVar(&c.concurrency, "c", 16, "workers: operations in flight at most")
	fs.IntVar(&c.n, "n", 0, "operations per target and round (default: run for -d)")
	fs.DurationVar(&c.duration, "d", 0, "duration per target and round (default 10s unless -n)")
	fs.Float64Var(&c.rate, "rate", 0, "target rate in operations per second, open loop (0: closed loop)")
	fs.IntVar(&c.warmup, "warmup", -1, "operations before measuring, not counted (default: one per worker)")
	fs.IntVar(&c.rounds, "rounds", 1, "-local: times the targets are measured, one after the other")
	fs.IntVar(&c.pool, "pool", 2000, "execute with -d: confirm widgets prepared before measuring")
	fs.DurationVar(&c.timeout, "timeout", time.Minute, "time-out of one operation")
	fs.BoolVar(&c.local, "local", false, "start a bench engine and the bare handler as child processes and measure both")
	fs.IntVar(&c.pid, "pid", 0, "process id of the engine, when it runs on this machine: reports its CPU time")
	fs.DurationVar(&c.firstToken, "first-token", 0, "-local: the model's first-token delay")
	fs.DurationVar(&c.tokenInterval, "token-interval", 0, "-local: the model's delay between deltas")
	fs.IntVar(&c.deltas, "deltas", 40, "-local: speak deltas per turn")
	fs.IntVar(&c.widgets, "widgets", 2, "-local: widgets per turn")
	fs.IntVar(&c.toolCalls, "tool-calls", 0, "-local: data tool calls per turn, made before the answer")
	fs.DurationVar(&c.backendLatency, "backend-latency", 0, "-local: latency of the bench backend's tool")
	fs.BoolVar(&c.usage, "usage", false, "-local: the engine meters its usage into a memory ledger, as the reference server does")
	fs.BoolVar(&c.chain, "fallback", false, "-local: the bench model is the healthy primary of a fallback chain (package fallback) whose last resort is the offline intent model, as a tenants file's model list makes it")
	c.voiceFlags.addFlags(fs)
	fs.StringVar(&c.jsonOut, "json", "", "write the report as JSON to this file")
	fs.StringVar(&c.svgOut, "svg", "", "write a chart of the latency distribution to this SVG file")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "-local: write a CPU profile of the engine during its measured phase")
	fs.StringVar(&c.memProfile, "memprofile", "", "-local: write the engine's heap profile after the run")
	fs.BoolVar(&c.quiet, "q", false, "no live progress")
	fs.StringVar(&c.stats, "stats", "", "URL of the server's /debug/stats (the reference server's -debug-addr), for its memory and goroutines")
	fs.StringVar(&c.bank, "bank", "", "URL of the demo bank behind the engine: its ledger is checked after executes (the reference server's banner names it)")
	fs.BoolVar(&c.soak, "soak", false, "check after the run: no error but -allow codes, the server's goroutines and heap back to before, each confirmed action run once (-bank); exit status 1 when a check fails")
	fs.DurationVar(&c.settle, "settle", 150*time.Second, "-soak: how long the server may take to close what the run opened (its idle connections to tenant backends close after 90 s)")
	heapSlack := fs.String("heap-slack", "32MiB", "-soak: live heap the server may keep above its baseline after the run (its caches, the demo bank's new users)")
	allow := fs.String("allow", "rate_limited", "-soak: error codes the run may meet, comma-separated")
	fs.StringVar(&c.serve, "serve", "", "")
	fs.StringVar(&c.backend, "backend", "", "")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: engineload [flags]\n\nFlags:\n")
		fs.VisitAll(func(f *flag.Flag) {
			if hiddenFlags[f.Name] {
				return
			}
			name, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(fs.Output(), "  -%s %s\n    \t%s", f.Name, name, usage)
			if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" && f.DefValue != "0s" {
				fmt.Fprintf(fs.Output(), " (default %s)", f.DefValue)
			}
			fmt.Fprintln(fs.Output())
		})
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if c.serve != "" {
		return c, nil
	}
	var errs []error
	if specs, err := parsePhases(c.mode, c.concurrency, c.rate); err != nil {
		errs = append(errs, err)
	} else if len(specs) == 1 && !c.soak {
		c.mode, c.concurrency, c.rate = specs[0].name, specs[0].concurrency, specs[0].rate
	} else { // several at once, or a soak of one: the checks of a soak are measureMix's
		c.phases = specs
		if c.local || c.raw || c.rounds > 1 || c.cpuProfile != "" || c.memProfile != "" {
			errs = append(errs, errors.New("several operations at once, and soaks, drive a -target: they exclude -local, -raw, -rounds, -cpuprofile and -memprofile"))
		}
	}
	if n, err := parseBytes(*heapSlack); err != nil {
		errs = append(errs, fmt.Errorf("-heap-slack: %w", err))
	} else {
		c.heapSlack = n
	}
	for a := range strings.SplitSeq(*allow, ",") {
		if a = strings.TrimSpace(a); a != "" {
			c.allow = append(c.allow, a)
		}
	}
	c.runID = strconv.FormatInt(time.Now().UnixNano(), 36)
	c.ledger = newLedger()
	if err := c.voiceFlags.check(); err != nil {
		errs = append(errs, err)
	}
	if c.concurrency < 1 {
		errs = append(errs, errors.New("-c must be at least 1"))
	}
	if c.n < 0 || c.duration < 0 || c.rate < 0 || c.rounds < 1 || c.pool < 1 || c.deltas < 0 || c.widgets < 0 || c.toolCalls < 0 {
		errs = append(errs, errors.New("-n, -d, -rate, -deltas, -widgets and -tool-calls cannot be negative; -rounds and -pool must be at least 1"))
	}
	if c.raw && (c.session || c.bound || c.mode != "turn") {
		errs = append(errs, errors.New("-raw runs turns without sessions: it excludes -session, -bound and other modes"))
	}
	if !c.local && c.rounds > 1 {
		errs = append(errs, errors.New("-rounds needs -local"))
	}
	if !c.local && (c.cpuProfile != "" || c.memProfile != "") {
		errs = append(errs, errors.New("-cpuprofile and -memprofile need -local"))
	}
	if c.n == 0 && c.duration == 0 {
		c.duration = 10 * time.Second
	}
	if c.warmup < 0 && c.phases == nil { // a phase of several warms up one operation per worker
		c.warmup = c.concurrency
	}
	return c, errors.Join(errs...)
}

// run is the command: a -serve child, or a measurement.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if cfg.serve != "" {
		return serve(ctx, cfg, stdin, stdout, stderr)
	}
	raiseFileLimit(stderr)
	rep, failed := measure(ctx, cfg, stdout, stderr)
	if rep == nil {
		return failed
	}
	printReport(stdout, rep)
	if rep.Soak != nil {
		printSoak(stdout, rep.Soak)
	}
	if cfg.jsonOut != "" {
		if err := writeJSON(cfg.jsonOut, rep); err != nil {
			return err
		}
	}
	if cfg.svgOut != "" {
		if err := os.WriteFile(cfg.svgOut, chartSVG(rep), 0o644); err != nil {
			return err
		}
	}
	if failed != nil {
		return failed
	}
	if rep.Soak != nil && len(rep.Soak.Failures) > 0 {
		return errSoakFailed
	}
	return nil
}

// errSoakFailed ends a soak whose checks failed, after its report.
var errSoakFailed = errors.New("the soak failed its checks")
