package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/pii"
	"github.com/convengine/engine/scenario"
)

// TestDemoBankScenarios runs the demo bank's conversation tests (examples/demobank/scenarios)
// as `engine test` does, with the demo served by this binary, and fails on any failure: every
// intent in English, Spanish and Arabic, transfers confirmed and refused, prompt injections,
// spoken turns and a device-proved transfer. Its spoken turns are said by flite's kal16 (and
// the other languages by espeak-ng) and heard by pocketsphinx, so -short skips it.
func TestDemoBankScenarios(t *testing.T) {
	testkit.Flite(t)
	testkit.Espeak(t)
	testkit.Sphinx(t)
	junit := filepath.Join(t.TempDir(), "junit.xml")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := runTest(ctx, []string{"-junit", junit, filepath.Join("..", "..", "examples", "demobank", "scenarios")},
		func(string) string { return "" }, &stdout, &stderr, false)
	if code != exitPass {
		t.Fatalf("engine test exited %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	raw, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
	}
	if err := xml.Unmarshal(raw, &suites); err != nil {
		t.Fatalf("the JUnit report: %v\n%s", err, raw)
	}
	if suites.Tests < 50 || suites.Failures != 0 || suites.Skipped != 0 {
		t.Errorf("JUnit report: %d tests, %d failures, %d skipped; want at least 50, none failed or skipped",
			suites.Tests, suites.Failures, suites.Skipped)
	}
}

// TestSpokenScenarioWithoutFlite: on a machine with espeak-ng and pocketsphinx but no flite, a
// scenario spoken in flite's voice is not said by espeak-ng instead (and misheard): the run
// stops before it starts, naming the package to install.
func TestSpokenScenarioWithoutFlite(t *testing.T) {
	testkit.RequireSpeech(t)
	bin := t.TempDir()
	for _, prog := range []string{"espeak-ng", "pocketsphinx_continuous"} {
		p, err := exec.LookPath(prog)
		if err != nil {
			t.Fatalf("%v: install it with apt-get install espeak-ng pocketsphinx pocketsphinx-en-us", err)
		}
		if err := os.Symlink(p, filepath.Join(bin, prog)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	var stdout, stderr bytes.Buffer
	code := runTest(t.Context(), []string{filepath.Join("..", "..", "examples", "demobank", "scenarios", "audio", "text-then-voice.yaml")},
		func(string) string { return "" }, &stdout, &stderr, false)
	want := `turn 2: voice: the engine's synthesizer cannot speak the turn in voice "kal16": engine: unknown voice: "kal16" is a voice of flite, which is not installed (apt-get install flite)`
	if code != exitBadInput || !strings.Contains(stderr.String(), want) {
		t.Fatalf("engine test exited %d, want %d with %q\n%s\n%s", code, exitBadInput, want, stdout.String(), stderr.String())
	}
}

// TestDemoSuiteCatchesATenantChange changes the demo tenant as a careless edit would (the
// transfer's amount read as a whole number, the Arabic spelling of Jordan given to Alex) and
// runs the suite's typed transfers against it: the suite fails, naming the scenarios and the
// fields that changed, where it passes against the tenant as shipped.
func TestDemoSuiteCatchesATenantChange(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	all, err := scenario.Load(filepath.Join("..", "..", "examples", "demobank", "scenarios", "transfer"))
	if err != nil {
		t.Fatal(err)
	}
	var typed []*scenario.Scenario
	for _, s := range all {
		audio := false
		for _, turn := range s.Turns {
			audio = audio || turn.Audio
		}
		if !audio && s.Tenant == "pk_demo" {
			typed = append(typed, s)
		}
	}
	log := enginetest.DebugLogger()
	run := func(change func(intents string) string) string {
		t.Helper()
		privacy, _ := pii.NewPrivacy(nil)
		tc, err := newTestConfig(ctx, testOptions{speech: "off"}, func(string) string { return "" }, privacy, log)
		if err != nil {
			t.Fatal(err)
		}
		defer tc.close()
		runner, err := scenario.NewRunner(&scenario.RunnerOptions{ModelFor: tc.modelFor,
			Config: func(ctx context.Context) (engine.Config, func() error, error) {
				cfg, done, err := tc.config(ctx)
				if err != nil || change == nil {
					return cfg, done, err
				}
				demo, _ := cfg.Tenants.Tenant(ctx, "pk_demo")
				proof, _ := cfg.Tenants.Tenant(ctx, "pk_demo_proof")
				changed := *demo
				changed.Intents = json.RawMessage(change(string(demo.Intents)))
				cfg.Tenants, err = engine.NewStaticTenants(&changed, proof)
				return cfg, done, err
			}})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := runner.Run(ctx, typed)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		rep.WriteSummary(&out)
		return out.String()
	}
	if out := run(nil); !strings.Contains(out, " 0 failed") {
		t.Fatalf("the typed transfers fail against the shipped tenant:\n%s", out)
	}
	out := run(func(intents string) string {
		intents = strings.Replace(intents, `"type":"amount"`, `"type":"number"`, 1)
		return strings.Replace(intents, `"Jordan":["جوردن"`, `"Alex":["جوردن"`, 1)
	})
	for _, want := range []string{
		`scenario "transfer of dollars and cents in words", turn 1 ("send fifteen dollars and fifty cents to Taylor"): confirm.amount: expected 15.50, got 15`,
		`confirm.payee: expected "Jordan", got "Alex"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the changed tenant's run does not say %q:\n%s", want, out)
		}
	}
}

// TestTestCommandAppliesPrivacy: the engines of the test command apply each tenant's privacy
// policy as the server does: the demo tenant's banking preset hides a card number from the
// model.
func TestTestCommandAppliesPrivacy(t *testing.T) {
	privacy, err := pii.NewPrivacy(nil)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := newTestConfig(t.Context(), testOptions{speech: "off"}, func(string) string { return "" }, privacy, enginetest.DebugLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer tc.close()
	cfg, done, err := tc.config(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	demo, err := cfg.Tenants.Tenant(t.Context(), "pk_demo")
	if err != nil || cfg.Privacy == nil {
		t.Fatalf("tenant %v, privacy %v", err, cfg.Privacy)
	}
	sh := cfg.Privacy.Turn(demo)
	if sh == nil {
		t.Fatal("no privacy for the demo tenant")
	}
	if got := sh.ToModel("card 4111 1111 1111 1111"); got != "card [CARD_1]" {
		t.Errorf("the model would see %q", got)
	}
}
