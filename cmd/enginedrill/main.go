// Command enginedrill is the fault drill: it runs the reference server as three replicas
// behind HAProxy, on Redis with a replica and three Redis Sentinels, all on loopback, drives
// SSE turns, voice-socket turns and confirmed actions through the balancer with the Go client,
// and meanwhile kills a replica with SIGKILL mid-turn, fails Redis's primary over to its
// replica, and drains a replica with SIGTERM, in rounds. It reports what the users saw
// (turns finished, resumed on another replica, lost and asked again, failed), holds the demo
// bank's ledger against the actions confirmed (each must have run exactly once), and gives
// the time to recover from each fault. It exits 1 when a check fails.
//
// It needs haproxy, redis-server and redis-sentinel (Debian's packages of those names) and
// runs from the repository, where it builds the reference server. ./drill.sh runs it;
// docs/scaling.md gives its figures.
//
//	go run ./cmd/enginedrill [-d 3m] [-rounds 3] [-turns 12] [-voice 6] [-actions 4]
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/internal/testkit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "enginedrill:", err)
		os.Exit(1)
	}
}

// config is the drill's command line.
type config struct {
	duration                time.Duration
	rounds, replicas        int
	turns, voice, actions   int
	bankDelay, drainDelay   time.Duration
	toolTimeout             time.Duration
	drainTimeout            time.Duration
	dir, engineBin, jsonOut string
}

func parse(args []string, out io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("enginedrill", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.DurationVar(&c.duration, "d", 3*time.Minute, "how long the users talk; the faults are spread over it")
	fs.IntVar(&c.rounds, "rounds", 3, "rounds of the three faults (kill, Redis failover, drain)")
	fs.IntVar(&c.replicas, "replicas", 3, "replicas of the reference server behind HAProxy")
	fs.IntVar(&c.turns, "turns", 12, "users asking their balance over SSE, one turn after another")
	fs.IntVar(&c.voice, "voice", 6, "users asking their balance on a voice socket")
	fs.IntVar(&c.actions, "actions", 4, "users sending money: a turn, then the confirmed action")
	fs.DurationVar(&c.bankDelay, "bank-delay", 400*time.Millisecond, "how long the demo bank takes to answer, so that turns are in flight when a fault strikes")
	fs.DurationVar(&c.toolTimeout, "tool-timeout", 3*time.Second, "the demo tenant's tool time-out (limits.tool_timeout): an action cut by a kill is taken over once it and 30 s have passed")
	fs.DurationVar(&c.drainDelay, "drain-delay", 1500*time.Millisecond, "the replicas' -drain-delay: HAProxy's check interval (500ms) times its fall count (2), and some")
	fs.DurationVar(&c.drainTimeout, "drain-timeout", 20*time.Second, "the replicas' -drain-timeout")
	fs.StringVar(&c.dir, "dir", "", "where the drill keeps its files (logs, configuration, report); a new temporary directory when empty")
	fs.StringVar(&c.engineBin, "engine", "", "the reference server's binary; built from ./cmd/engine when empty")
	fs.StringVar(&c.jsonOut, "json", "", "write the report as JSON to this file too")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if c.rounds < 1 || c.replicas < 2 || c.duration <= 0 {
		return nil, errors.New("-rounds must be at least 1, -replicas at least 2, -d positive")
	}
	return c, nil
}

// needPrograms names the Debian packages of the programs the drill runs that are missing.
func needPrograms() error {
	var missing []string
	for prog, pkg := range map[string]string{"haproxy": "haproxy", "redis-server": "redis-server", "redis-sentinel": "redis-sentinel"} {
		if _, err := exec.LookPath(prog); err != nil {
			missing = append(missing, pkg)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the drill runs real %v: install the Debian packages (apt-get install %v)", missing, missing)
	}
	return nil
}

func run(ctx context.Context, args []string, out io.Writer) error {
	cfg, err := parse(args, out)
	if err != nil {
		return err
	}
	if err := needPrograms(); err != nil {
		return err
	}
	if cfg.dir == "" {
		if cfg.dir, err = os.MkdirTemp("", "enginedrill-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(cfg.dir, 0o700); err != nil {
		return err
	}
	if cfg.engineBin == "" {
		cfg.engineBin = filepath.Join(cfg.dir, "engine")
		build := exec.CommandContext(ctx, "go", "build", "-o", cfg.engineBin, "github.com/convengine/engine/cmd/engine")
		build.Stdout, build.Stderr = out, out
		if err := build.Run(); err != nil {
			return fmt.Errorf("building the reference server: %w", err)
		}
	}
	fmt.Fprintf(out, "drill: %d replicas behind HAProxy, Redis with a replica and three sentinels; files in %s\n", cfg.replicas, cfg.dir)

	redis, err := testkit.StartRedisFailover()
	if err != nil {
		return err
	}
	defer redis.Remove()

	// The demo bank, shared by the replicas as a tenant's backend is, slow enough for turns to
	// be in flight when a fault strikes.
	bank := demobank.New(nil)
	bankSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(cfg.bankDelay)
		bank.ServeHTTP(w, r)
	}))
	defer bankSrv.Close()
	tn, err := demobank.Tenant(bankSrv.URL, "")
	if err != nil {
		return err
	}
	// An action whose replica died stays claimed for its tool's time-out and 30 s: a short
	// time-out (the bank answers well within it) settles such actions sooner.
	tn.Limits.ToolTimeout = engine.Duration(cfg.toolTimeout)
	tenants, _ := json.Marshal(map[string]any{"tenants": []*engine.Tenant{tn}})
	tenantsFile := filepath.Join(cfg.dir, "tenants.json")
	if err := os.WriteFile(tenantsFile, tenants, 0o600); err != nil {
		return err
	}

	key := make([]byte, 32)
	copy(key, "the drill's shared signing key..")
	replicas, err := newReplicas(cfg.replicas, cfg.engineBin, cfg.dir,
		[]string{"-tenants", tenantsFile, "-records", "off", "-speech", "off", "-log-level", "warn",
			"-drain-delay", cfg.drainDelay.String(), "-drain-timeout", cfg.drainTimeout.String()},
		[]string{"ENGINE_SIGNING_KEY=" + base64.StdEncoding.EncodeToString(key), "ENGINE_REDIS_URL=" + redis.URL()})
	if err != nil {
		return err
	}
	for _, r := range replicas {
		if err := r.start(ctx); err != nil {
			return err
		}
		defer r.kill()
	}
	lb, err := startBalancer(ctx, cfg.dir, replicas)
	if err != nil {
		return err
	}
	defer lb.stop()
	base := "http://" + lb.addr
	fmt.Fprintf(out, "drill: balancer %s, replicas", base)
	for _, r := range replicas {
		fmt.Fprintf(out, " %s=%s", r.name, r.addr)
	}
	fmt.Fprintf(out, ", Redis primary %s\n", redis.Primary.Addr)

	t := newTally()
	tctx, stopTraffic := context.WithCancel(ctx)
	defer stopTraffic()
	started := time.Now()
	settled, err := traffic(tctx, base, cfg.turns, cfg.voice, cfg.actions, t)
	if err != nil {
		return err
	}
	d := &drill{cfg: cfg, replicas: replicas, redis: redis, start: started, out: out}
	faultErr := d.faults(ctx)
	time.Sleep(time.Until(started.Add(cfg.duration)))
	stopTraffic()
	settled()
	elapsed := time.Since(started)
	if faultErr != nil {
		return faultErr
	}
	rep := report(t, d.log, bank, started, elapsed)
	rep.print(out)
	if cfg.jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(cfg.jsonOut, b, 0o600); err != nil {
			return err
		}
	}
	if len(rep.Failures) > 0 {
		return fmt.Errorf("%d checks failed (files in %s)", len(rep.Failures), cfg.dir)
	}
	return nil
}
