package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/httptools"
)

// demoEngine serves the demo tenant, in process, as the reference server does, until the
// returned function is called.
func demoEngine(t *testing.T) (string, func()) {
	d := startDemo(t, http.DefaultTransport)
	return d.url, d.stop
}

// demo is the demo tenant's engine and bank, in process.
type demo struct {
	url, bank string
	stop      func()
}

// startDemo serves the demo tenant (enginetest.NewDemo) whose tools go through tr.
func startDemo(t *testing.T, tr http.RoundTripper) demo {
	t.Helper()
	toolClient := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	d := enginetest.NewDemo(t, &enginetest.DemoOptions{Config: engine.Config{
		Toolset: httptools.New(&httptools.Options{Client: toolClient}), Synthesizer: silence{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	return demo{url: d.URL, bank: d.BankURL, stop: func() {
		d.Close()
		toolClient.CloseIdleConnections()
	}}
}

// silence is a synthesizer that answers a tenth of a second of silence at once.
type silence struct{}

func (silence) Synthesize(context.Context, string, string) (*engine.Audio, error) {
	return &engine.Audio{SampleRate: 16000, PCM: io.NopCloser(bytes.NewReader(make([]byte, 3200)))}, nil
}

// runJSON runs the command with args and returns its JSON report.
func runJSON(t *testing.T, args ...string) *Report {
	t.Helper()
	file := filepath.Join(t.TempDir(), "report.json")
	var out bytes.Buffer
	if err := run(t.Context(), append(args, "-json", file), strings.NewReader(""), &out, io.Discard); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

// TestModes drives an engine in process with each mode and checks what the report counts.
func TestModes(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	url, stop := demoEngine(t)
	defer stop()
	for _, c := range []struct {
		name      string
		args      []string
		ok        int64
		errors    map[string]int64
		withFirst bool
	}{
		{name: "turns", args: []string{"-n", "12", "-c", "3"}, ok: 12, withFirst: true},
		{name: "raw turns", args: []string{"-raw", "-n", "12", "-c", "3"}, ok: 12, withFirst: true},
		{name: "bound sessions", args: []string{"-bound", "-n", "6", "-c", "2"}, ok: 6, withFirst: true},
		{name: "open loop", args: []string{"-rate", "400", "-n", "10", "-c", "2"}, ok: 10, withFirst: true},
		{name: "for a duration", args: []string{"-d", "200ms", "-c", "2", "-say", "show my recent transactions"}, withFirst: true},
		{name: "executes", args: []string{"-mode", "execute", "-n", "5", "-c", "2"}, ok: 5},
		{name: "executes for a duration", args: []string{"-mode", "execute", "-d", "5s", "-pool", "4", "-c", "2", "-bound"}, ok: 4},
		{name: "speech", args: []string{"-mode", "tts", "-n", "4", "-c", "2"}, ok: 4, withFirst: true}, // first audio byte
		{name: "unknown key", args: []string{"-key", "pk_nope", "-n", "3", "-c", "1"}, errors: map[string]int64{"unknown_engine_key": 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := runJSON(t, append([]string{"-target", url, "-q"}, c.args...)...)
			if len(rep.Runs) != 1 {
				t.Fatalf("%d runs", len(rep.Runs))
			}
			r := rep.Runs[0]
			if c.ok > 0 && r.OK != c.ok || c.ok == 0 && c.errors == nil && r.OK == 0 {
				t.Errorf("%d ok, want %d; errors %v", r.OK, c.ok, r.Errors)
			}
			got := map[string]int64{}
			for _, e := range r.Errors {
				got[e.Code] = e.Count
			}
			if len(got) != len(c.errors) {
				t.Errorf("errors %v, want %v", got, c.errors)
			}
			for code, n := range c.errors {
				if got[code] != n {
					t.Errorf("errors %v, want %v", got, c.errors)
				}
			}
			if (r.First != nil) != c.withFirst || (c.withFirst && r.First.Count != r.OK) || r.Done.Count != r.OK {
				t.Errorf("first %+v, done %+v", r.First, r.Done)
			}
			if r.Server != nil || r.Added != nil || rep.Ratio != 0 {
				t.Errorf("server costs or ratios of a remote engine: %+v %+v %v", r.Server, r.Added, rep.Ratio)
			}
		})
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-mode", "shout"},
		{"-c", "0"},
		{"-n", "-1"},
		{"-raw", "-bound"},
		{"-raw", "-mode", "execute"},
		{"-rounds", "2"},
		{"-cpuprofile", "x.pprof"},
		{"extra"},
	} {
		if err := run(t.Context(), args, strings.NewReader(""), io.Discard, io.Discard); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	var help bytes.Buffer
	run(t.Context(), []string{"-h"}, nil, io.Discard, &help)
	if !strings.Contains(help.String(), "-local") || strings.Contains(help.String(), "-serve") {
		t.Errorf("help:\n%s", help.String())
	}
	if err := run(t.Context(), []string{"-target", "ftp://x", "-n", "1"}, nil, io.Discard, io.Discard); err == nil {
		t.Error("an ftp target was accepted")
	}
}

func TestProgress(t *testing.T) {
	var out enginetest.Logs
	p := newProgress(&out, false)
	p.every = 10 * time.Millisecond
	rec := newRecorder(0)
	var live atomic.Int64
	live.Store(3)
	stop := p.start("engine", rec, &live)
	rec.add(sample{first: time.Millisecond, total: 2 * time.Millisecond})
	time.Sleep(50 * time.Millisecond)
	stop()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 2 || strings.Contains(out.String(), "\r") || !strings.Contains(lines[0], "engine") ||
		!strings.Contains(lines[0], "1 ok") || !strings.Contains(lines[0], "3 in flight") {
		t.Fatalf("progress:\n%s", out.String())
	}
	quiet := newProgress(&out, true)
	quiet.start("x", rec, &live)()
}
