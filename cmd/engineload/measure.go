package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// snapshot is what the processes had used at one moment.
type snapshot struct {
	serverCPU time.Duration // zero without a pid
	stats     *debugStats   // nil without a stats endpoint
	clientCPU time.Duration
}

func takeSnapshot(ctx context.Context, t *target, gcFirst bool) (snapshot, error) {
	var s snapshot
	var err error
	getStats := func() {
		if t.stats != "" && err == nil {
			s.stats, err = fetchStats(ctx, t.http, t.stats, gcFirst)
		}
	}
	// The collection before a phase is not part of it; the one after comes after the CPU reading.
	if gcFirst {
		getStats()
	}
	if t.pid > 0 {
		cpu, perr := processCPU(strconv.Itoa(t.pid))
		if perr != nil && err == nil {
			err = perr
		}
		s.serverCPU = cpu
	}
	s.clientCPU, _ = processCPU("self")
	if !gcFirst {
		getStats()
	}
	return s, err
}

// fetchStats reads the server's stats after collecting its garbage; reset starts a new count of
// its first-speak times.
func fetchStats(ctx context.Context, hc *http.Client, u string, reset bool) (*debugStats, error) {
	u += "?gc=1"
	if reset {
		u += "&reset=1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the server's stats: %w", err)
	}
	defer resp.Body.Close()
	var s debugStats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return nil, fmt.Errorf("reading the server's stats: %w", err)
	}
	return &s, nil
}

// tally sums the rounds of one target.
type tally struct {
	t         *target
	rec       *recorder
	seconds   float64
	serverCPU time.Duration
	clientCPU time.Duration
	allocs    uint64
	bytes     uint64
	first     *debugStats // before the first round
	last      *debugStats // after the last round
	// firstSpeak are the server's first-speak times of each round.
	firstSpeak []Summary
	// firstAudio are the engine's shares of the voice turns' first audio, of each round.
	firstAudio []Summary
	// sockets is what the sockets of an idle run cost the server (the last round's).
	sockets *SocketCost
}

func (ty *tally) add(rec *recorder, elapsed time.Duration, before, after snapshot) {
	ty.rec.merge(rec)
	ty.seconds += elapsed.Seconds()
	ty.serverCPU += after.serverCPU - before.serverCPU
	ty.clientCPU += after.clientCPU - before.clientCPU
	if before.stats != nil && after.stats != nil {
		ty.allocs += after.stats.AllocObjects - before.stats.AllocObjects
		ty.bytes += after.stats.AllocBytes - before.stats.AllocBytes
		if ty.first == nil {
			ty.first = before.stats
		}
		ty.last = after.stats
		if after.stats.FirstSpeak.Count > 0 {
			ty.firstSpeak = append(ty.firstSpeak, after.stats.FirstSpeak)
		}
		if after.stats.FirstAudio.Count > 0 {
			ty.firstAudio = append(ty.firstAudio, after.stats.FirstAudio)
		}
	}
}

// measure runs the whole measurement: every target, every round.
func measure(ctx context.Context, cfg *config, stdout, stderr io.Writer) (*Report, error) {
	if cfg.phases != nil {
		return measureMix(ctx, cfg, stdout)
	}
	var targets []*target
	if cfg.local {
		ts, stop, err := localTargets(ctx, cfg, stderr)
		if err != nil {
			return nil, err
		}
		defer stop()
		targets = ts
	} else {
		u, err := url.Parse(cfg.target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("-target %q: must be an absolute http or https URL", cfg.target)
		}
		targets = []*target{{name: u.Host, url: strings.TrimSuffix(cfg.target, "/"), key: cfg.key, pid: cfg.pid, stats: cfg.stats, bank: cfg.bank}}
	}
	m := modes[cfg.mode](cfg)
	p := plan{concurrency: cfg.concurrency, n: cfg.n, duration: cfg.duration, rate: cfg.rate, warmup: cfg.warmup}
	prog := newProgress(stdout, cfg.quiet)
	tallies := make([]*tally, len(targets))
	for i, t := range targets {
		t.http = newHTTPClient(cfg.concurrency, cfg.timeout)
		defer t.http.CloseIdleConnections()
		tallies[i] = &tally{t: t, rec: newRecorder(t.offset)}
	}
	started := time.Now()
	for round := range cfg.rounds {
		for i, t := range targets {
			label := t.name
			if cfg.rounds > 1 {
				label = fmt.Sprintf("%s (round %d/%d)", t.name, round+1, cfg.rounds)
			}
			if err := runPhase(ctx, cfg, m, t, p, prog, label, tallies[i]); err != nil {
				return nil, err
			}
		}
	}
	rep := &Report{
		Mode: cfg.mode, Operation: m.describe(), Local: cfg.local, Started: started.UTC().Format(time.RFC3339),
		Settings: settingsOf(cfg), Machine: machineOf(),
	}
	for _, ty := range tallies {
		rep.Runs = append(rep.Runs, runOf(ty, cfg))
	}
	if len(rep.Runs) == 2 && rep.Runs[0].Name == "bare" && rep.Runs[0].Throughput > 0 {
		rep.Ratio = round3(rep.Runs[1].Throughput / rep.Runs[0].Throughput)
	}
	if bank := targets[len(targets)-1].bank; bank != "" && cfg.ledger.len() > 0 {
		var err error
		if rep.Ledger, err = cfg.ledger.check(ctx, targets[len(targets)-1].http, bank); err != nil {
			return nil, err
		}
		if !rep.Ledger.ok() {
			return rep, fmt.Errorf("the bank's ledger does not match the actions: %d missing, %d duplicated, %d unasked", rep.Ledger.Missing, rep.Ledger.Duplicated, rep.Ledger.Unasked)
		}
	}
	return rep, nil
}

// runPhase drives one target once: it prepares the workers, warms up, then measures.
func runPhase(ctx context.Context, cfg *config, m mode, t *target, p plan, prog *progress, label string, ty *tally) error {
	po, _ := m.(phaseObserver)
	if po != nil {
		if err := po.beforePrepare(ctx, t); err != nil {
			return err
		}
	}
	workers, err := prepare(ctx, m, t, p)
	if err != nil {
		return err
	}
	defer closeWorkers(workers)
	var live atomic.Int64
	if p.warmup > 0 {
		if _, err := drive(ctx, workers, plan{concurrency: p.concurrency, n: p.warmup}, newRecorder(0), &live); err != nil {
			return err
		}
	}
	before, err := takeSnapshot(ctx, t, true)
	if err != nil {
		return err
	}
	var profile chan error
	if cfg.cpuProfile != "" && t.name == "engine" && t.stats != "" {
		profile = startCPUProfile(ctx, t, cfg, p)
	}
	rec := newRecorder(t.offset)
	stopProgress := prog.start(label, rec, &live)
	elapsed, err := drive(ctx, workers, p, rec, &live)
	stopProgress()
	if err != nil {
		return err
	}
	if profile != nil {
		if err := <-profile; err != nil {
			return err
		}
	}
	after, err := takeSnapshot(ctx, t, false)
	if err != nil {
		return err
	}
	ty.add(rec, elapsed, before, after)
	if po != nil {
		if ty.sockets, err = po.afterPhase(ctx, t, len(workers)); err != nil {
			return err
		}
	}
	if cfg.memProfile != "" && t.name == "engine" && t.stats != "" {
		return fetchProfile(ctx, t, "/debug/pprof/heap?gc=1", cfg.memProfile)
	}
	return nil
}

// startCPUProfile profiles the engine for the phase's duration (or, with -n, for a time the
// phase is expected to take) and writes the profile when it arrives.
func startCPUProfile(ctx context.Context, t *target, cfg *config, p plan) chan error {
	secs := int(p.duration.Seconds())
	if secs < 1 {
		secs = 5
	}
	errc := make(chan error, 1)
	go func() {
		errc <- fetchProfile(ctx, t, "/debug/pprof/profile?seconds="+strconv.Itoa(secs), cfg.cpuProfile)
	}()
	return errc
}

func fetchProfile(ctx context.Context, t *target, path, file string) error {
	base := strings.TrimSuffix(t.stats, "/debug/stats")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return err
	}
	resp, err := t.http.Do(req)
	if err != nil {
		return fmt.Errorf("profiling the engine: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profiling the engine: %s", resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runOf turns a target's tally into its part of the report.
func runOf(ty *tally, cfg *config) Run {
	rec := ty.rec
	ok, errs := rec.counts()
	r := Run{Name: ty.t.name, URL: ty.t.url, OK: ok, Failed: errs, Errors: rec.errorList(), LateStarts: rec.late,
		Seconds: round3(ty.seconds), Done: summarize(rec.total), Sockets: ty.sockets}
	if ty.seconds > 0 {
		r.Throughput = round3(float64(ok) / ty.seconds)
	}
	if rec.first.TotalCount() > 0 {
		f, a := summarize(rec.first), summarize(rec.added)
		r.First, r.Added = &f, &a
		if ty.t.offset == 0 && !cfg.local {
			r.Added = nil
		}
	}
	ops := float64(ok + errs)
	if ops > 0 {
		r.ClientCPUPerOp = round3(float64(ty.clientCPU.Microseconds()) / ops)
	}
	if ty.t.pid > 0 && ops > 0 {
		r.Server = serverCostOf(ty, ops)
	}
	return r
}

// serverCostOf is what the server spent in a tally's phases, over ops operations: CPU time
// when its pid is known, allocations, heap and goroutines when it serves its figures.
func serverCostOf(ty *tally, ops float64) *ServerCost {
	s := &ServerCost{PID: ty.t.pid, CPUSeconds: round3(ty.serverCPU.Seconds())}
	if ops > 0 {
		s.CPUPerOp = round3(float64(ty.serverCPU.Microseconds()) / ops)
	}
	if ty.first != nil && ops > 0 {
		s.AllocsPerOp = round3(float64(ty.allocs) / ops)
		s.BytesPerOp = round3(float64(ty.bytes) / ops)
	}
	if ty.first != nil {
		s.HeapBefore, s.HeapAfter = ty.first.HeapLive, ty.last.HeapLive
		s.GoroutinesBefore, s.GoroutinesAfter = ty.first.Goroutines, ty.last.Goroutines
		s.MemoryAfter = ty.last.TotalMemory
	}
	if len(ty.firstSpeak) > 0 {
		s.FirstSpeak = worstOf(ty.firstSpeak)
	}
	if len(ty.firstAudio) > 0 {
		s.FirstAudio = worstOf(ty.firstAudio)
	}
	return s
}

// worstOf combines the summaries of rounds: the counts add up, each figure is the worst round's,
// the distribution that of the round with the worst p99. (The server keeps no histogram across
// rounds to merge.)
func worstOf(ss []Summary) *Summary {
	w := ss[0]
	for _, s := range ss[1:] {
		if s.P99 > w.P99 {
			w.Percentiles = s.Percentiles
		}
		w.Mean = max(w.Mean, s.Mean)
		w.P50, w.P90, w.P99, w.P999, w.Max = max(w.P50, s.P50), max(w.P90, s.P90), max(w.P99, s.P99), max(w.P999, s.P999), max(w.Max, s.Max)
		w.Count += s.Count
	}
	return &w
}

func settingsOf(cfg *config) Settings {
	s := Settings{Concurrency: cfg.concurrency, N: cfg.n, Rate: cfg.rate, Warmup: cfg.warmup, Rounds: cfg.rounds,
		Session: cfg.session || cfg.bound, Bound: cfg.bound, Raw: cfg.raw, Transcript: cfg.say}
	if cfg.n == 0 {
		s.Duration = cfg.duration.String()
	}
	for _, p := range cfg.phases {
		s.Phases = append(s.Phases, p.label())
	}
	s.Speech = speechSettings(cfg)
	if cfg.local {
		s.Model = &ModelSettings{FirstToken: cfg.firstToken.String(), TokenInterval: cfg.tokenInterval.String(),
			Deltas: cfg.deltas, Widgets: cfg.widgets, ToolCalls: cfg.toolCalls, BackendLatency: cfg.backendLatency.String()}
		if cfg.mode == "execute" {
			s.Model = nil
			s.Transcript = cfg.actionSay
		}
	} else {
		s.Target = cfg.target
	}
	return s
}

func machineOf() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) > 0 {
			m.LoadAverage, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	return m
}
