package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/convengine/engine/enginetest"
)

// TestMain lets the test binary be the servers of -local runs: they start this program with
// -serve.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-serve" {
		if err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// gone reports whether no process pid exists any more.
func gone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// TestLocal runs the self-contained benchmark end to end: the servers start as child
// processes, both are measured, the report holds the ratio and the server's costs, and no
// process is left behind.
func TestLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers as child processes")
	}
	dir := t.TempDir()
	svg := filepath.Join(dir, "latency.svg")
	rep := runJSON(t, "-local", "-n", "40", "-c", "4", "-tool-calls", "1", "-q", "-svg", svg,
		"-cpuprofile", filepath.Join(dir, "cpu.pprof"), "-memprofile", filepath.Join(dir, "heap.pprof"))
	if !rep.Local || rep.Ratio <= 0 || len(rep.Runs) != 2 || rep.Runs[0].Name != "bare" || rep.Runs[1].Name != "engine" {
		t.Fatalf("report %+v", rep)
	}
	if rep.Settings.Model == nil || rep.Settings.Model.Deltas != 40 || rep.Settings.Model.ToolCalls != 1 || rep.Machine.CPUs < 1 {
		t.Errorf("settings %+v, machine %+v", rep.Settings, rep.Machine)
	}
	for _, r := range rep.Runs {
		if r.OK != 40 || r.Failed != 0 || r.First == nil || r.Added == nil || r.First.Count != 40 {
			t.Errorf("%s: %+v", r.Name, r)
		}
		s := r.Server
		if s == nil || s.PID <= 0 || s.AllocsPerOp <= 0 || s.BytesPerOp <= 0 || s.HeapAfter == 0 || s.GoroutinesAfter == 0 {
			t.Fatalf("%s: server %+v", r.Name, s)
		}
		if s.FirstSpeak == nil || s.FirstSpeak.Count != 40 || s.FirstSpeak.P50 <= 0 {
			t.Errorf("%s: the server's first-speak times %+v", r.Name, s.FirstSpeak)
		}
		if !gone(s.PID) {
			t.Errorf("the %s server (pid %d) is still running", r.Name, s.PID)
		}
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if counts := parseSVG(t, data); counts["polyline"] != 6 { // first, done and the server's first of each
		t.Errorf("chart elements %v", counts)
	}
	for _, f := range []string{"cpu.pprof", "heap.pprof"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("profile %s: %v", f, err)
		}
	}

	t.Run("execute", func(t *testing.T) {
		rep := runJSON(t, "-local", "-mode", "execute", "-n", "6", "-c", "2", "-q")
		if len(rep.Runs) != 1 || rep.Runs[0].OK != 6 || rep.Runs[0].Server == nil || !gone(rep.Runs[0].Server.PID) {
			t.Fatalf("report %+v", rep)
		}
		// Six measured and two warm-up actions, each run once by the demo bank.
		if l := rep.Ledger; l == nil || l.Actions != 8 || l.Executed != 8 || l.Transfers != 8 || !l.ok() {
			t.Errorf("ledger %+v", rep.Ledger)
		}
	})
}

// TestServeStopsWithItsInput checks that a server ends when its standard input does, which is
// how a -local run that is killed takes its servers with it.
func TestServeStopsWithItsInput(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var out enginetest.Logs
	errc := make(chan error, 1)
	go func() { errc <- run(t.Context(), []string{"-serve", "bare"}, r, &out, os.Stderr) }()
	w.Close()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	r.Close()
	if !strings.HasPrefix(out.String(), "http://127.0.0.1:") {
		t.Fatalf("output %q", out.String())
	}
}
