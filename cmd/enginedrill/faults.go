package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/convengine/engine/internal/testkit"
)

// fault is one fault the drill made.
type fault struct {
	Round  int           `json:"round"`
	Kind   string        `json:"kind"` // "kill", "failover" or "drain"
	Target string        `json:"target"`
	At     time.Duration `json:"at"` // after the drill's start
	// Took: a failover, until the sentinels promoted the replica; a drain, until the replica
	// exited after SIGTERM.
	Took time.Duration `json:"took,omitempty"`
	Err  string        `json:"error,omitempty"`
}

// drill makes the faults, on a schedule, while the users talk.
type drill struct {
	cfg      *config
	replicas []*replica
	redis    *testkit.RedisFailover
	start    time.Time
	out      io.Writer
	log      []fault
}

// restartAfter is how long a killed replica stays down, as an orchestrator takes to restart it.
const restartAfter = 3 * time.Second

// faults runs the rounds: in each, a replica killed with SIGKILL at 15% of the round (back after
// restartAfter), Redis's primary killed and failed over at 45%, another replica drained with
// SIGTERM at 75% (started again once it exited). It returns an error only when the deployment
// could not be brought back, which ends the drill.
func (d *drill) faults(ctx context.Context) error {
	round := d.cfg.duration / time.Duration(d.cfg.rounds)
	for r := range d.cfg.rounds {
		at := func(frac float64) time.Time {
			return d.start.Add(time.Duration(r)*round + time.Duration(frac*float64(round)))
		}
		victim := d.replicas[r%len(d.replicas)]
		if !sleepUntil(ctx, at(0.15)) {
			return ctx.Err()
		}
		victim.kill()
		d.note(fault{Round: r + 1, Kind: "kill", Target: victim.name})
		if !sleepUntil(ctx, time.Now().Add(restartAfter)) {
			return ctx.Err()
		}
		if err := victim.start(ctx); err != nil {
			return fmt.Errorf("restarting %s after its kill: %w", victim.name, err)
		}

		if !sleepUntil(ctx, at(0.45)) {
			return ctx.Err()
		}
		if err := d.redis.Ready(time.Minute); err != nil { // the last round's old primary is in sync
			return fmt.Errorf("before failing Redis over: %w", err)
		}
		f := fault{Round: r + 1, Kind: "failover", Target: "redis " + d.redis.Primary.Addr, At: time.Since(d.start)}
		took, err := d.redis.Failover(ctx)
		f.Took = took
		if err != nil {
			f.Err = err.Error()
			d.note(f)
			return fmt.Errorf("failing Redis over: %w", err)
		}
		d.note(f)

		drained := d.replicas[(r+1)%len(d.replicas)]
		if !sleepUntil(ctx, at(0.75)) {
			return ctx.Err()
		}
		f = fault{Round: r + 1, Kind: "drain", Target: drained.name, At: time.Since(d.start)}
		f.Took, err = drained.term(d.cfg.drainDelay + d.cfg.drainTimeout + 5*time.Second)
		if err != nil {
			f.Err = err.Error()
		}
		d.note(f)
		if err := drained.start(ctx); err != nil {
			return fmt.Errorf("restarting %s after its drain: %w", drained.name, err)
		}
	}
	return nil
}

// note logs f, at the time of the call unless f has one.
func (d *drill) note(f fault) {
	if f.At == 0 {
		f.At = time.Since(d.start)
	}
	d.log = append(d.log, f)
	fmt.Fprintf(d.out, "drill: %6.1fs round %d: %s %s", f.At.Seconds(), f.Round, f.Kind, f.Target)
	if f.Took > 0 {
		fmt.Fprintf(d.out, " (%.2fs)", f.Took.Seconds())
	}
	if f.Err != "" {
		fmt.Fprintf(d.out, ": %s", f.Err)
	}
	fmt.Fprintln(d.out)
}

// sleepUntil waits until t, or ctx ends (false).
func sleepUntil(ctx context.Context, t time.Time) bool {
	select {
	case <-time.After(time.Until(t)):
		return true
	case <-ctx.Done():
		return false
	}
}
