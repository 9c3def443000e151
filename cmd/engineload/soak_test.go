package main

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine/internal/debugstats"
)

// TestSoak runs turns and executes at once against the demo tenant, then checks the server
// came back to its baseline and the bank ran each confirmed action once.
func TestSoak(t *testing.T) {
	// The engine's idle connections to the bank close quickly, so that the goroutines of the
	// process return to the baseline within the test.
	tr := &http.Transport{IdleConnTimeout: 200 * time.Millisecond}
	d := startDemo(t, tr)
	defer d.stop()
	stats := httptest.NewServer(debugstats.Handler())
	defer stats.Close()

	rep := runJSON(t, "-target", d.url, "-mode", "turn=6,execute=2@40", "-d", "1s", "-q", "-soak",
		"-stats", stats.URL+"/debug/stats", "-bank", d.bank, "-settle", "20s")
	if len(rep.Runs) != 2 || rep.Runs[0].Name != "turn×6" || rep.Runs[1].Name != "execute×2@40/s" {
		t.Fatalf("runs %+v", rep.Runs)
	}
	for _, r := range rep.Runs {
		if r.OK == 0 || r.Failed != 0 || r.Operation == "" {
			t.Errorf("%s: %+v", r.Name, r)
		}
	}
	l := rep.Ledger
	if l == nil || l.Actions == 0 || l.Executed != l.Actions || l.Transfers != l.Executed || !l.ok() {
		t.Errorf("ledger %+v", l)
	}
	s := rep.Soak
	if s == nil || len(s.Failures) != 0 || s.Baseline.Goroutines == 0 || s.Settled.HeapLive == 0 || s.During == nil || s.During.CPUPerOp != 0 {
		t.Errorf("soak %+v", s) // no pid: no CPU figure
	}
	if got := rep.Settings.Phases; strings.Join(got, ",") != "turn×6,execute×2@40/s" {
		t.Errorf("phases %v", got)
	}
}

// TestLedgerFindsDuplicates checks the ledger against a bank that ran an action twice and one
// that ran none.
func TestLedgerFindsDuplicates(t *testing.T) {
	d := startDemo(t, http.DefaultTransport)
	defer d.stop()
	ran := func(token string, times int) {
		for i := range times {
			req, _ := http.NewRequest(http.MethodPost, d.bank+"/transfers", strings.NewReader(`{"amount":5,"to":"Alex","currency":"USD"}`))
			req.Header.Set("X-Token", token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", token+"-"+string(rune('a'+i)))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("transfer: %s", resp.Status)
			}
		}
	}
	l := newLedger()
	l.note("once", outcomeExecuted)
	ran("once", 1)
	l.note("twice", outcomeExecuted)
	ran("twice", 2)
	l.note("never", outcomeExecuted)
	l.note("declined-but-ran", outcomeDeclined)
	ran("declined-but-ran", 1)
	c, err := l.check(t.Context(), http.DefaultClient, d.bank)
	if err != nil {
		t.Fatal(err)
	}
	want := LedgerCheck{Bank: d.bank, Actions: 4, Executed: 3, Declined: 1, Transfers: 4, Missing: 1, Duplicated: 1, Unasked: 1}
	if *c != want || c.ok() {
		t.Errorf("check %+v, want %+v", *c, want)
	}
}

func TestSoakJudge(t *testing.T) {
	cfg := &config{allow: []string{"rate_limited"}, heapSlack: 1 << 20}
	rep := &Report{Runs: []Run{
		{Name: "turn", OK: 10, Errors: []ErrorCount{{Code: "rate_limited", Count: 3}}},
		{Name: "voice", OK: 5, Errors: []ErrorCount{{Code: "timeout", Count: 2}}},
	}, Ledger: &LedgerCheck{Duplicated: 1}}
	s := &Soak{Baseline: ServerFigures{Goroutines: 10, HeapLive: 4 << 20}, Settled: ServerFigures{Goroutines: 30, HeapLive: 6 << 20}}
	s.judge(rep, cfg)
	got := strings.Join(s.Failures, "\n")
	for _, want := range []string{"voice: 2 errors (timeout 2)", "goroutines: 30", "live heap", "ledger: 0 confirmed actions missing, 1 run more than once"} {
		if !strings.Contains(got, want) {
			t.Errorf("failures lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "turn") {
		t.Errorf("the allowed rate_limited answers failed the soak:\n%s", got)
	}
	ok := &Soak{Baseline: ServerFigures{Goroutines: 10, HeapLive: 4 << 20}, Settled: ServerFigures{Goroutines: 12, HeapLive: 4 << 20}}
	ok.judge(&Report{Runs: []Run{{Name: "turn", OK: 1}}}, cfg)
	if len(ok.Failures) != 0 {
		t.Errorf("failures %v", ok.Failures)
	}
}

func TestPhasesAndSizes(t *testing.T) {
	specs, err := parsePhases("turn=1000, tts@10,execute=8@2.5", 16, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []phaseSpec{{"turn", 1000, 0}, {"tts", 16, 10}, {"execute", 8, 2.5}}
	if len(specs) != 3 {
		t.Fatalf("specs %+v", specs)
	}
	for i := range want {
		if specs[i] != want[i] {
			t.Errorf("spec %d: %+v, want %+v", i, specs[i], want[i])
		}
	}
	for _, bad := range []string{"", "turn,turn", "shout", "turn=0", "turn=x", "turn@0", "turn@-1", "turn=5@"} {
		if _, err := parsePhases(bad, 16, 0); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	for in, want := range map[string]int64{"32MiB": 32 << 20, "500MB": 500e6, "64k": 64 << 10, "1048576": 1 << 20, "1.5GiB": 3 << 29} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "MiB", "12 parsecs", "-1"} {
		if _, err := parseBytes(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if err := run(t.Context(), []string{"-mode", "turn,execute", "-local"}, nil, io.Discard, io.Discard); err == nil {
		t.Error("-local with several phases was accepted")
	}
	if err := run(t.Context(), []string{"-soak", "-target", "http://127.0.0.1:1", "-n", "1"}, nil, io.Discard, io.Discard); err == nil || errors.Is(err, errSoakFailed) {
		t.Errorf("a soak without -stats: %v", err)
	}
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
