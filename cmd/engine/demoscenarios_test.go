package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/convengine/engine/internal/speechtest"
)

// TestDemoBankScenarios runs the demo bank's conversation tests (examples/demobank/scenarios)
// as `engine test` does, with the demo served by this binary, and fails on any failure: every
// intent in English, Spanish and Arabic, transfers confirmed and refused, prompt injections,
// spoken turns and a device-proved transfer. It speaks with espeak-ng and hears with
// pocketsphinx, so -short skips it.
func TestDemoBankScenarios(t *testing.T) {
	speechtest.Require(t)
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
