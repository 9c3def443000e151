package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/convengine/engine/enginetest"
)

var recordTapes = flag.Bool("record-tapes", false, "record the tapes of examples/demobank/scenarios-openai against the replay server's fixtures")

// openaiScenarios are the demo bank's scenarios answered by an OpenAI-compatible model, each
// with its tape.
const openaiScenarios = "../../examples/demobank/scenarios-openai"

// TestRecordDemoTapes records the tapes of the OpenAI scenarios with `engine test -record`
// against the replay server, which answers with OpenAI's recorded answers to the demo's
// conversations. It runs with -record-tapes only:
//
//	go test ./cmd/engine -run TestRecordDemoTapes -record-tapes
func TestRecordDemoTapes(t *testing.T) {
	if !*recordTapes {
		t.Skip("records the tapes with -record-tapes")
	}
	replay := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), enginetest.DemoRoute)
	env := map[string]string{"OPENAI_BASE_URL": replay.URL, "OPENAI_API_KEY": "sk-recording-key-0000", "ENGINE_SPEECH": "off"}
	var stdout, stderr bytes.Buffer
	code := runTest(t.Context(), []string{"-record", openaiScenarios}, func(k string) string { return env[k] }, &stdout, &stderr, false)
	if code != exitPass {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	t.Logf("%d completions recorded\n%s", len(replay.Requests()), stdout.String())
}

// TestDemoTapesReplay: the OpenAI scenarios pass replayed from their committed tapes, with no
// model server and no key, and two runs give the same JUnit report but for its times.
func TestDemoTapesReplay(t *testing.T) {
	tapes, _ := filepath.Glob(filepath.Join(openaiScenarios, "tapes", "*.jsonl"))
	files, _ := filepath.Glob(filepath.Join(openaiScenarios, "*.yaml"))
	if len(files) < 4 || len(tapes) != len(files) {
		t.Fatalf("%d scenarios, %d tapes", len(files), len(tapes))
	}
	env := map[string]string{"ENGINE_SPEECH": "off"}
	times := regexp.MustCompile(` (time|timestamp)="[^"]*"`)
	var reports []string
	for i := range 2 {
		junit := filepath.Join(t.TempDir(), "junit.xml")
		var stdout, stderr bytes.Buffer
		code := runTest(t.Context(), []string{"-junit", junit, openaiScenarios}, func(k string) string { return env[k] }, &stdout, &stderr, false)
		if code != exitPass {
			t.Fatalf("run %d: exit %d\n%s\n%s", i+1, code, stdout.String(), stderr.String())
		}
		raw, err := os.ReadFile(junit)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(raw), "<testcase "); n != len(files) {
			t.Fatalf("%d test cases in\n%s", n, raw)
		}
		reports = append(reports, times.ReplaceAllString(string(raw), ""))
	}
	if reports[0] != reports[1] {
		t.Errorf("two replays differ:\n%s\n%s", reports[0], reports[1])
	}
}

// TestDemoTapeChanged: a scenario whose words changed since its tape was recorded fails, named,
// with the request and the place in it that changed; so does a tape cut short.
func TestDemoTapeChanged(t *testing.T) {
	dir := t.TempDir()
	copyFile := func(from, to string, edit func(string) string) {
		raw, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(to), 0o755)
		if err := os.WriteFile(to, []byte(edit(string(raw))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	same := func(s string) string { return s }
	copyFile(filepath.Join(openaiScenarios, "transfer.yaml"), filepath.Join(dir, "transfer.yaml"),
		func(s string) string {
			return strings.Replace(s, "send 20 dollars to Alex", "send 25 dollars to Alex", 1)
		})
	copyFile(filepath.Join(openaiScenarios, "tapes", "openai-transfer-to-alex.jsonl"), filepath.Join(dir, "tapes", "openai-transfer-to-alex.jsonl"), same)
	copyFile(filepath.Join(openaiScenarios, "balance.yaml"), filepath.Join(dir, "balance.yaml"), same)
	copyFile(filepath.Join(openaiScenarios, "tapes", "openai-balance.jsonl"), filepath.Join(dir, "tapes", "openai-balance.jsonl"),
		func(s string) string { return s[:len(s)/2] })

	env := map[string]string{"ENGINE_SPEECH": "off"}
	var stdout, stderr bytes.Buffer
	code := runTest(t.Context(), []string{dir}, func(k string) string { return env[k] }, &stdout, &stderr, false)
	out := stdout.String() + stderr.String()
	if code == exitPass {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"openai transfer to Alex",
		`modeltape: request 1 of ` + filepath.Join(dir, "tapes", "openai-transfer-to-alex.jsonl") + ` changed at messages[2].content: recorded "send 20 dollars to Alex", now "send 25 dollars to Alex"`,
		"openai balance",
		filepath.Join(dir, "tapes", "openai-balance.jsonl") + ":2: not an exchange",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output does not say %s:\n%s", want, out)
		}
	}
	t.Logf("exit %d\n%s", code, out)
}
