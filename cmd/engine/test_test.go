package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// runTestCommand runs `engine test` with args and returns its exit status and output.
func runTestCommand(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	getenv := func(string) string { return "" } // the offline demo, whatever the machine's environment
	code := runTest(context.Background(), append([]string{"-speech", "off"}, args...), getenv, &stdout, &stderr, false)
	return code, stdout.String(), stderr.String()
}

// TestTestCommand: `engine test` runs a folder of scenarios against the server's demo, writes
// its JUnit and JSON reports, and exits 0 when all pass, 1 when one fails, 2 on bad input.
func TestTestCommand(t *testing.T) {
	dir := t.TempDir()
	scen := func(amount string) string {
		return `- name: transfer to Alex
  tenant: pk_demo
  user: demo-user
  tags: [transfer]
  turns:
    - say: send 20 dollars to Alex
      expect:
        widgets: [confirm]
        confirm: {amount: ` + amount + `, currency: USD, payee: Alex}
        speech_contains: ["Alex"]
      confirm:
        expect: {status: done}
- name: proof transfer
  tenant: pk_demo_proof
  user: demo-user
  turns:
    - say: send 20 dollars to Alex
      confirm: {expect: {status: done, speech_contains: [sent]}}
- name: balance
  tenant: pk_demo
  user: demo-user
  turns:
    - say: what is my balance
      expect: {tools: [get_balance], widgets: [stat]}
`
	}
	path := filepath.Join(dir, "suite", "bank.yaml")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(scen("20.00")), 0o644)
	junit, jsonPath := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report.json")

	code, out, errOut := runTestCommand(t, "-junit", junit, "-json", jsonPath, filepath.Join(dir, "suite"))
	if code != exitPass || !strings.Contains(out, "3 scenarios: 3 passed, 0 failed") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var suites struct {
		Tests  int `xml:"tests,attr"`
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	raw, err := os.ReadFile(junit)
	if err != nil || xml.Unmarshal(raw, &suites) != nil || suites.Tests != 3 || len(suites.Suites) != 1 || suites.Suites[0].Name != path {
		t.Fatalf("the JUnit report: %v\n%s", err, raw)
	}
	var report struct {
		Passed    int
		Scenarios []struct{ Name, Status string }
	}
	raw, err = os.ReadFile(jsonPath)
	if err != nil || json.Unmarshal(raw, &report) != nil || report.Passed != 3 {
		t.Fatalf("the JSON report: %v\n%s", err, raw)
	}

	// -run keeps the scenarios whose name or a tag matches.
	if code, out, _ := runTestCommand(t, "-run", "^transfer$", path); code != exitPass || !strings.Contains(out, "1 scenarios: 1 passed") {
		t.Fatalf("-run: exit %d\n%s", code, out)
	}

	// A wrong amount: exit 1, the failure in full.
	os.WriteFile(path, []byte(scen("21.00")), 0o644)
	code, out, _ = runTestCommand(t, "-junit", junit, path)
	want := `scenario "transfer to Alex", turn 1 ("send 20 dollars to Alex"): confirm.amount: expected 21.00, got 20`
	if code != exitFail || !strings.Contains(out, want) || !strings.Contains(out, "FAIL transfer to Alex") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if raw, _ := os.ReadFile(junit); !strings.Contains(string(raw), `failures="1"`) {
		t.Fatalf("the JUnit report of a failure:\n%s", raw)
	}

	// Bad input: exit 2 and what is wrong, nothing run.
	bad := filepath.Join(dir, "bad.yaml")
	for name, tc := range map[string]struct {
		src  string
		args []string
		want string
	}{
		"unknown key":      {"name: x\ntenant: pk_demo\nuser: u\nturns: [{say: hi, expect: {toolz: [get_balance]}}]\n", nil, bad + `:4: scenario "x": turn 1: expect: unknown key "toolz"`},
		"unknown tool":     {"name: x\ntenant: pk_demo\nuser: u\nturns:\n  - say: hi\n    expect: {tools: [get_weather]}\n", nil, bad + `:6: scenario "x": turn 1: expect.tools: tenant "pk_demo" has no tool "get_weather"`},
		"no path":          {"", []string{}, "no scenario file or folder given"},
		"record live":      {"", []string{"-record", "-live", bad}, "-record and -live exclude each other"},
		"record, no model": {"name: x\ntenant: pk_demo\nuser: u\nturns: [{say: hi}]\n", []string{"-record", bad}, "-record and -live need a model"},
	} {
		os.WriteFile(bad, []byte(tc.src), 0o644)
		args := tc.args
		if args == nil {
			args = []string{bad}
		}
		code, out, errOut := runTestCommand(t, args...)
		if code != exitBadInput || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, want 2 with %q\nstdout: %s\nstderr: %s", name, code, tc.want, out, errOut)
		}
	}
}

// TestTestCommandTapes: -record answers with the OpenAI-compatible server and writes each
// scenario's tape; without flags, a scenario with a tape replays it offline, and a request
// that no longer matches fails the scenario naming what changed.
func TestTestCommandTapes(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, chunk := range []string{
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"test-model","choices":[{"index":0,"delta":{"role":"assistant","content":"Your balance is in good shape."},"finish_reason":null}]}`,
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"test-model","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", chunk)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "model.yaml")
	os.WriteFile(path, []byte("name: Model Balance\ntenant: pk_demo\nuser: u\nturns:\n  - say: how am I doing\n    expect: {speech_contains: [good shape]}\n"), 0o644)
	env := map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1/", "OPENAI_API_KEY": "sk-test-secret"}
	run := func(args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := runTest(context.Background(), append([]string{"-speech", "off"}, args...), func(k string) string { return env[k] }, &stdout, &stderr, false)
		return code, stdout.String() + stderr.String()
	}
	if code, out := run("-record", path); code != exitPass {
		t.Fatalf("-record: exit %d\n%s", code, out)
	}
	tape, err := os.ReadFile(filepath.Join(dir, "tapes", "model-balance.jsonl"))
	if err != nil || calls.Load() == 0 || bytes.Contains(tape, []byte("sk-test-secret")) {
		t.Fatalf("the tape: %v, %d calls\n%s", err, calls.Load(), tape)
	}
	// Replayed: the server is gone.
	srv.Close()
	env = map[string]string{}
	if code, out := run(path); code != exitPass {
		t.Fatalf("replay: exit %d\n%s", code, out)
	}
	// The prompt changed: the request differs from the tape's.
	os.WriteFile(path, []byte("name: Model Balance\ntenant: pk_demo\nuser: u\nturns:\n  - say: how am I doing today\n    expect: {speech_contains: [good shape]}\n"), 0o644)
	code, out := run(path)
	if code != exitFail || !strings.Contains(out, `scenario "Model Balance"`) || !strings.Contains(out, "request 1") {
		t.Fatalf("a changed request: exit %d\n%s", code, out)
	}
}

// TestTestCommandLiveJudge: -live answers with the configured model, and ENGINE_JUDGE_MODEL
// decides the judge: criteria, whose "no" fails the scenario with the judge's reason.
func TestTestCommandLiveJudge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"judge-model"`)) {
			w.Header().Set("Content-Type", "application/json")
			verdict := `{\"pass\": false, \"reason\": \"the answer names no balance\"}`
			if bytes.Contains(body, []byte("is polite")) {
				verdict = `{\"pass\": true, \"reason\": \"it is\"}`
			}
			fmt.Fprintf(w, `{"id":"j1","object":"chat.completion","created":1,"model":"judge-model","choices":[{"index":0,"message":{"role":"assistant","content":"%s"},"finish_reason":"stop"}]}`, verdict)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hello there.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "live.yaml")
	os.WriteFile(path, []byte("- name: judged\n  tenant: pk_demo\n  user: u\n  turns:\n    - say: what is my balance\n      expect: {judge: the answer states the balance}\n- name: polite\n  tenant: pk_demo\n  user: u\n  turns:\n    - say: hello\n      expect: {judge: the answer is polite}\n"), 0o644)
	env := map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1/", "ENGINE_JUDGE_MODEL": "judge-model"}
	var stdout, stderr bytes.Buffer
	code := runTest(context.Background(), []string{"-speech", "off", "-live", path}, func(k string) string { return env[k] }, &stdout, &stderr, false)
	out := stdout.String()
	if code != exitFail || !strings.Contains(out, `turn 1 ("what is my balance"): judge: expected "the answer states the balance", got not met: the answer names no balance`) ||
		!strings.Contains(out, "1 passed, 1 failed") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "tapes")); err == nil {
		t.Fatal("-live wrote a tape")
	}
}

// TestTestCommandInterrupted: SIGTERM while a scenario waits for its model stops the run at
// once: the scenarios that ran are reported, the one cut short fails, those not started are
// left out, a line says the run was interrupted, and the exit status is 3.
func TestTestCommandInterrupted(t *testing.T) {
	waiting := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte("take your time")) {
			waiting <- struct{}{}
			<-r.Context().Done() // a model that never answers
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hello there.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "slow.yaml")
	scen := func(name, say string) string {
		return "- name: " + name + "\n  tenant: pk_demo\n  user: u\n  turns:\n    - say: hello\n    - say: " + say + "\n"
	}
	os.WriteFile(path, []byte(scen("quick", "hello again")+scen("slow", "take your time")+scen("never run", "hello")), 0o644)
	env := map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1/", "OPENAI_API_KEY": "sk-test"}
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- testCommand([]string{"-speech", "off", "-parallel", "1", path}, func(k string) string { return env[k] }, &stdout, &stderr, false)
	}()
	select {
	case <-waiting:
	case code := <-done:
		t.Fatalf("exit %d before the slow scenario\n%s\n%s", code, stdout.String(), stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("the slow scenario did not start")
	}
	sent := time.Now()
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var code int
	select {
	case code = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not stop within 10 s of SIGTERM")
	}
	out := stdout.String()
	if took := time.Since(sent); took > 2*time.Second {
		t.Errorf("the command stopped %v after SIGTERM", took)
	}
	for _, want := range []string{"PASS quick", "FAIL slow", "--- FAIL: slow", "interrupted before the run's end: 1 of 3 scenarios did not run",
		"2 scenarios: 1 passed, 1 failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if code != exitInterrupted || strings.Contains(out, "never run") {
		t.Errorf("exit %d\n%s\n%s", code, out, stderr.String())
	}
}
