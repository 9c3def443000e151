package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// phaseRun is one phase of a mixed run: its operations, workers and record.
type phaseRun struct {
	spec    phaseSpec
	mode    mode
	workers []worker
	rec     *recorder
	live    atomic.Int64
	elapsed time.Duration
}

// measureMix drives one server with several phases at once (-mode turn=1000,voice=1000@10),
// each with its own workers, rate and record, and reports each as a run. With -soak it then
// checks that the server came back to where it started and, with -bank, the bank's ledger.
func measureMix(ctx context.Context, cfg *config, stdout io.Writer) (*Report, error) {
	u, err := url.Parse(cfg.target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("-target %q: must be an absolute http or https URL", cfg.target)
	}
	total := 0
	for _, s := range cfg.phases {
		total += s.concurrency
	}
	t := &target{name: u.Host, url: strings.TrimSuffix(cfg.target, "/"), key: cfg.key, pid: cfg.pid,
		stats: cfg.stats, bank: cfg.bank, http: newHTTPClient(total, cfg.timeout)}
	defer t.http.CloseIdleConnections()
	started := time.Now()

	var soak *Soak
	if cfg.soak {
		soak = &Soak{}
		if soak.Baseline, err = serverFigures(ctx, t); err != nil {
			return nil, err
		}
	}
	phases := make([]*phaseRun, len(cfg.phases))
	for i, s := range cfg.phases {
		m := modes[s.name](cfg)
		if em, ok := m.(*executeMode); ok {
			em.lazy = true // widgets asked for as they are executed: none outlives its token
		}
		phases[i] = &phaseRun{spec: s, mode: m, rec: newRecorder(0)}
	}
	defer func() {
		for _, ph := range phases {
			closeWorkers(ph.workers)
		}
	}()
	// Workers are prepared and warmed up phase by phase, then every phase runs at once.
	for _, ph := range phases {
		p := ph.plan(cfg)
		if ph.workers, err = prepare(ctx, ph.mode, t, p); err != nil {
			return nil, err
		}
		if p.warmup > 0 {
			warm := plan{concurrency: p.concurrency, n: p.warmup}
			if _, err := drive(ctx, ph.workers, warm, newRecorder(0), &ph.live); err != nil {
				return nil, err
			}
		}
	}
	before, err := takeSnapshot(ctx, t, true)
	if err != nil {
		return nil, err
	}
	items := make([]progressItem, len(phases))
	for i, ph := range phases {
		items[i] = progressItem{ph.spec.label(), ph.rec, &ph.live}
	}
	stopProgress := newProgress(stdout, cfg.quiet).startAll(items)
	errs := make([]error, len(phases))
	var wg sync.WaitGroup
	for i, ph := range phases {
		wg.Go(func() {
			ph.elapsed, errs[i] = drive(ctx, ph.workers, ph.plan(cfg), ph.rec, &ph.live)
		})
	}
	wg.Wait()
	stopProgress()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	after, err := takeSnapshot(ctx, t, false)
	if err != nil {
		return nil, err
	}

	rep := &Report{Mode: cfg.mode, Operation: "phases at once", Started: started.UTC().Format(time.RFC3339),
		Settings: settingsOf(cfg), Machine: machineOf()}
	// The load tool's CPU and the server's are shared by the phases: each run shows the
	// load tool's average over all, and the server's cost is the soak's.
	var ops int64
	for _, ph := range phases {
		ops += opsOf(ph.rec)
	}
	for _, ph := range phases {
		ty := &tally{t: t, rec: ph.rec, seconds: ph.elapsed.Seconds()}
		if ops > 0 {
			ty.clientCPU = time.Duration(float64(after.clientCPU-before.clientCPU) * float64(opsOf(ph.rec)) / float64(ops))
		}
		r := runOf(ty, cfg)
		r.Name, r.Mode, r.Operation = ph.spec.label(), ph.spec.name, ph.mode.describe()
		r.Server = nil // one server for every phase: its cost is the soak's
		rep.Runs = append(rep.Runs, r)
	}
	if soak != nil {
		all := &tally{t: t, rec: newRecorder(0)}
		all.add(newRecorder(0), 0, before, after)
		soak.During = serverCostOf(all, float64(ops))
		for _, ph := range phases {
			closeWorkers(ph.workers)
			ph.workers = nil
		}
		t.http.CloseIdleConnections()
		if err := soak.settle(ctx, t, cfg); err != nil {
			return nil, err
		}
	}
	if cfg.bank != "" && cfg.ledger.len() > 0 {
		if rep.Ledger, err = cfg.ledger.check(ctx, t.http, cfg.bank); err != nil {
			return nil, err
		}
	}
	if soak != nil {
		soak.judge(rep, cfg)
		rep.Soak = soak
	}
	return rep, nil
}

// plan is how the phase drives its workers.
func (ph *phaseRun) plan(cfg *config) plan {
	warmup := cfg.warmup
	if warmup < 0 { // the default: one operation per worker
		warmup = ph.spec.concurrency
	}
	if ph.spec.rate > 0 {
		warmup = 0 // a paced phase starts at its pace
	}
	return plan{concurrency: ph.spec.concurrency, n: cfg.n, duration: cfg.duration, rate: ph.spec.rate, warmup: warmup}
}

// opsOf counts the operations rec recorded, successful or not.
func opsOf(rec *recorder) int64 {
	ok, failed := rec.counts()
	return ok + failed
}
