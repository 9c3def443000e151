package agui_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/agui"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
)

const userToken = "agui-user-token-s3cr3t"

type fixture struct {
	demo *enginetest.Demo
	srv  *httptest.Server
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	d := enginetest.NewDemo(t, nil)
	srv := httptest.NewServer(agui.Handler(d.Engine, nil))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		if strings.Contains(d.Logs.String(), userToken) {
			t.Errorf("the user's token reached the log:\n%s", d.Logs.String())
		}
	})
	return &fixture{demo: d, srv: srv}
}

// response is an AG-UI run's answer: its status and content type, and its events or problem.
type response struct {
	status      int
	contentType string
	events      []map[string]any
	problem     map[string]any
}

func (r *response) types() []string {
	var out []string
	for _, ev := range r.events {
		out = append(out, ev["type"].(string))
	}
	return out
}

func (r *response) last() map[string]any { return r.events[len(r.events)-1] }

// customs returns the values of the CUSTOM events named name.
func (r *response) customs(name string) []map[string]any {
	var out []map[string]any
	for _, ev := range r.events {
		if ev["type"] == "CUSTOM" && ev["name"] == name {
			v, _ := ev["value"].(map[string]any)
			out = append(out, v)
		}
	}
	return out
}

// text joins the deltas of the run's text messages.
func (r *response) text() string {
	var b strings.Builder
	for _, ev := range r.events {
		if ev["type"] == "TEXT_MESSAGE_CONTENT" {
			b.WriteString(ev["delta"].(string))
		}
	}
	return b.String()
}

func (f *fixture) run(t *testing.T, hdr http.Header, body string) *response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.srv.URL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"text/event-stream"},
		"X-Engine-Key": {demobank.EngineKey}, "X-Token": {userToken}, "X-Request-Id": {"prod-agui-" + t.Name()[4:8]}}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := &response{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type")}
	if out.contentType != "text/event-stream" {
		if err := json.NewDecoder(resp.Body).Decode(&out.problem); err != nil {
			t.Fatalf("%d %s: %v", resp.StatusCode, out.contentType, err)
		}
		return out
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("a line that is not data: %q", line)
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		out.events = append(out.events, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func input(threadID, runID, say string) string {
	return fmt.Sprintf(`{"threadId":%q,"runId":%q,"messages":[{"id":"u1","role":"user","content":%q}],"tools":[],"context":[],"state":{}}`,
		threadID, runID, say)
}

func resumeInput(threadID, runID, interruptID, status, payload string) string {
	entry := fmt.Sprintf(`{"interruptId":%q,"status":%q`, interruptID, status)
	if payload != "" {
		entry += `,"payload":` + payload
	}
	return fmt.Sprintf(`{"threadId":%q,"runId":%q,"messages":[],"tools":[],"context":[],"resume":[%s}]}`, threadID, runID, entry)
}

func basicAuth() string {
	return `{"auth":{"method":"passcode","verifiedAt":"` + time.Now().UTC().Format(time.RFC3339) + `"}}`
}

// checkSequence checks what AG-UI's clients check of a run: it opens with RUN_STARTED, ends
// with one RUN_FINISHED or RUN_ERROR, and its text messages start before their content and
// end before the run does.
func checkSequence(t *testing.T, r *response) {
	t.Helper()
	types := r.types()
	if len(types) < 2 || types[0] != "RUN_STARTED" {
		t.Fatalf("events %v, want RUN_STARTED first", types)
	}
	open := ""
	for i, ev := range r.events {
		switch ev["type"] {
		case "TEXT_MESSAGE_START":
			if open != "" {
				t.Fatalf("event %d: a text message starts while %s is open", i, open)
			}
			open = ev["messageId"].(string)
		case "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END":
			if ev["messageId"] != open {
				t.Fatalf("event %d %v: not the open message %q", i, ev, open)
			}
			if ev["type"] == "TEXT_MESSAGE_END" {
				open = ""
			}
		case "RUN_FINISHED", "RUN_ERROR":
			if i != len(types)-1 {
				t.Fatalf("events %v: the run's end is not last", types)
			}
			if open != "" {
				t.Fatalf("the run ends with the text message %s open", open)
			}
		}
	}
	if end := types[len(types)-1]; end != "RUN_FINISHED" && end != "RUN_ERROR" {
		t.Fatalf("events %v: no RUN_FINISHED or RUN_ERROR at the end", types)
	}
}

func TestBalanceTurnIsARunOfText(t *testing.T) {
	f := newFixture(t)
	r := f.run(t, nil, input("thread-1", "run-1", "What's my balance?"))
	if r.status != 200 {
		t.Fatalf("%d %v", r.status, r.problem)
	}
	checkSequence(t, r)
	start := r.events[0]
	if start["threadId"] != "thread-1" || start["runId"] != "run-1" || start["protocolVersion"] != "1.0" {
		t.Errorf("RUN_STARTED %v", start)
	}
	if !strings.Contains(r.text(), "$1,234.56") {
		t.Errorf("text %q, want the balance", r.text())
	}
	end := r.last()
	if end["type"] != "RUN_FINISHED" || end["outcome"].(map[string]any)["type"] != "success" {
		t.Errorf("end %v", end)
	}
	if _, ok := end["result"].(map[string]any)["speak"]; !ok {
		t.Errorf("RUN_FINISHED.result %v, want the render spec", end["result"])
	}
	if len(r.customs("widget")) == 0 {
		t.Errorf("events %v: no widget", r.types())
	}
}

// transfer runs the transfer turn and returns its interrupt.
func (f *fixture) transfer(t *testing.T, thread string) map[string]any {
	t.Helper()
	r := f.run(t, nil, input(thread, "run-transfer", "send 20 dollars to Alex"))
	if r.status != 200 {
		t.Fatalf("%d %v", r.status, r.problem)
	}
	checkSequence(t, r)
	end := r.last()
	o, _ := end["outcome"].(map[string]any)
	if end["type"] != "RUN_FINISHED" || o["type"] != "interrupt" {
		t.Fatalf("end %v, want RUN_FINISHED with an interrupt", end)
	}
	its := o["interrupts"].([]any)
	if len(its) != 1 {
		t.Fatalf("interrupts %v", its)
	}
	it := its[0].(map[string]any)
	widget := it["metadata"].(map[string]any)["widget"].(map[string]any)
	if it["reason"] != agui.ReasonConfirm || widget["type"] != "confirm" || it["message"] == "" || it["expiresAt"] == "" {
		t.Errorf("interrupt %v", it)
	}
	if len(r.customs("widget")) == 0 {
		t.Errorf("the confirm widget is not a CUSTOM widget event")
	}
	return it
}

func TestTransferEndsAsAnInterruptThatRunsOnce(t *testing.T) {
	f := newFixture(t)
	it := f.transfer(t, "thread-2")
	id := it["id"].(string)
	if n := f.demo.Bank.Transfers(userToken); n != 0 {
		t.Fatalf("%d transfers before the resume", n)
	}

	r := f.run(t, nil, resumeInput("thread-2", "run-resume", id, "resolved", basicAuth()))
	if r.status != 200 {
		t.Fatalf("%d %v", r.status, r.problem)
	}
	checkSequence(t, r)
	done := r.customs("done")
	if len(done) != 1 || done[0]["title"] != "Money sent" {
		t.Fatalf("done %v, events %v", done, r.types())
	}
	if !strings.Contains(r.text(), "I sent $20.00 to Alex") {
		t.Errorf("text %q", r.text())
	}
	if end := r.last(); end["type"] != "RUN_FINISHED" {
		t.Errorf("end %v", end)
	}
	if n := f.demo.Bank.Transfers(userToken); n != 1 {
		t.Fatalf("%d transfers, want 1", n)
	}

	// The same interrupt again: an interrupt is answered once, so the run is an error with the
	// engine's code, and the engine's token runs the action once.
	again := f.run(t, nil, resumeInput("thread-2", "run-resume-2", id, "resolved", basicAuth()))
	if again.status != 200 {
		t.Fatalf("%d %v", again.status, again.problem)
	}
	checkSequence(t, again)
	if end := again.last(); end["type"] != "RUN_ERROR" || end["code"] != engine.CodeActionReplayed || end["message"] == "" || len(again.customs("done")) != 0 {
		t.Errorf("the replayed resume: %v, want RUN_ERROR %s", again.events, engine.CodeActionReplayed)
	}
	if n := f.demo.Bank.Transfers(userToken); n != 1 {
		t.Fatalf("the replayed resume made %d transfers, want 1", n)
	}
}

func TestResumeOfAnotherUserIsRefused(t *testing.T) {
	f := newFixture(t)
	id := f.transfer(t, "thread-3")["id"].(string)
	r := f.run(t, http.Header{"X-Token": {"someone-else"}}, resumeInput("thread-3", "run-x", id, "resolved", basicAuth()))
	checkSequence(t, r)
	end := r.last()
	if end["type"] != "RUN_ERROR" || end["code"] != engine.CodeInvalidActionToken {
		t.Fatalf("end %v, want RUN_ERROR %s", end, engine.CodeInvalidActionToken)
	}
	if n := f.demo.Bank.Transfers(userToken) + f.demo.Bank.Transfers("someone-else"); n != 0 {
		t.Fatalf("%d transfers", n)
	}
}

func TestEditedInterruptIsRefused(t *testing.T) {
	f := newFixture(t)
	id := f.transfer(t, "thread-4")["id"].(string)
	// Raise the amount in the execute object the id carries: the token does not match it.
	forged := forgeAmount(t, id)
	r := f.run(t, nil, resumeInput("thread-4", "run-x", forged, "resolved", basicAuth()))
	checkSequence(t, r)
	if end := r.last(); end["type"] != "RUN_ERROR" || end["code"] != engine.CodeInvalidActionToken {
		t.Fatalf("end %v", end)
	}
	if n := f.demo.Bank.Transfers(userToken); n != 0 {
		t.Fatalf("%d transfers", n)
	}
}

func TestCancelledResumeRunsNothing(t *testing.T) {
	f := newFixture(t)
	id := f.transfer(t, "thread-5")["id"].(string)
	r := f.run(t, nil, resumeInput("thread-5", "run-cancel", id, "cancelled", ""))
	if r.status != 200 {
		t.Fatalf("%d %v", r.status, r.problem)
	}
	checkSequence(t, r)
	if got := strings.Join(r.types(), " "); got != "RUN_STARTED RUN_FINISHED" {
		t.Errorf("events %s", got)
	}
	if n := f.demo.Bank.Transfers(userToken); n != 0 {
		t.Fatalf("%d transfers", n)
	}
	// The action is still there to run: cancelling told the engine nothing.
	r = f.run(t, nil, resumeInput("thread-5", "run-later", id, "resolved", basicAuth()))
	if len(r.customs("done")) != 1 || f.demo.Bank.Transfers(userToken) != 1 {
		t.Fatalf("events %v, %d transfers", r.types(), f.demo.Bank.Transfers(userToken))
	}
}

func TestBadRequestsAreProblems(t *testing.T) {
	f := newFixture(t)
	valid := input("thread-6", "run-1", "What's my balance?")
	for _, tt := range []struct {
		name   string
		method string
		hdr    http.Header
		body   string
		status int
		code   string
	}{
		{"no engine key", "", http.Header{"X-Engine-Key": nil}, valid, 401, engine.CodeUnknownEngineKey},
		{"unknown engine key", "", http.Header{"X-Engine-Key": {"pk_nobody"}}, valid, 401, engine.CodeUnknownEngineKey},
		{"no user token", "", http.Header{"X-Token": nil}, valid, 401, engine.CodeMissingUserToken},
		{"bad request id", "", http.Header{"X-Request-Id": {"no spaces allowed"}}, valid, 400, engine.CodeInvalidRequestID},
		{"GET", http.MethodGet, nil, "", 405, engine.CodeMethodNotAllowed},
		{"not JSON", "", http.Header{"Content-Type": {"text/plain"}}, valid, 415, engine.CodeUnsupportedMediaType},
		{"broken JSON", "", nil, `{"threadId":`, 400, engine.CodeInvalidRequest},
		{"an array", "", nil, `[]`, 400, engine.CodeInvalidRequest},
		{"no threadId", "", nil, `{"runId":"r","messages":[]}`, 400, engine.CodeInvalidRequest},
		{"no runId", "", nil, `{"threadId":"t","messages":[]}`, 400, engine.CodeInvalidRequest},
		{"no messages", "", nil, `{"threadId":"t","runId":"r","messages":[]}`, 400, engine.CodeInvalidRequest},
		{"last message the assistant's", "", nil, `{"threadId":"t","runId":"r","messages":[{"id":"a","role":"assistant","content":"hi"}]}`, 400, engine.CodeInvalidRequest},
		{"content a number", "", nil, `{"threadId":"t","runId":"r","messages":[{"id":"a","role":"user","content":7}]}`, 400, engine.CodeInvalidRequest},
		{"transcript too long", "", nil, input("t", "r", strings.Repeat("a", 9000)), 400, engine.CodeInvalidRequest},
		{"unknown interrupt", "", nil, resumeInput("t", "r", "nope", "resolved", basicAuth()), 400, engine.CodeInvalidRequest},
		{"interrupt not base64", "", nil, resumeInput("t", "r", "confirm.%%%", "resolved", basicAuth()), 400, engine.CodeInvalidRequest},
		{"resolved without auth", "", nil, resumeInput("t", "r", fakeID(), "resolved", ""), 400, engine.CodeInvalidRequest},
		{"bad verifiedAt", "", nil, resumeInput("t", "r", fakeID(), "resolved", `{"auth":{"method":"passcode","verifiedAt":true}}`), 400, engine.CodeInvalidRequest},
		{"bad status", "", nil, resumeInput("t", "r", fakeID(), "maybe", ""), 400, engine.CodeInvalidRequest},
		{"too large", "", nil, input("t", "r", strings.Repeat("a", 2<<20)), 413, engine.CodePayloadTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			req, _ := http.NewRequestWithContext(t.Context(), method, f.srv.URL, strings.NewReader(tt.body))
			req.Header = http.Header{"Content-Type": {"application/json"}, "X-Engine-Key": {demobank.EngineKey}, "X-Token": {userToken},
				"X-Request-Id": {"prod-agui-bad"}}
			for k, v := range tt.hdr {
				if v == nil {
					delete(req.Header, k)
				} else {
					req.Header[k] = v
				}
			}
			resp, err := f.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var p map[string]any
			json.NewDecoder(resp.Body).Decode(&p)
			if resp.StatusCode != tt.status || resp.Header.Get("Content-Type") != "application/problem+json" || p["code"] != tt.code {
				t.Errorf("%d %s %v, want %d %s", resp.StatusCode, resp.Header.Get("Content-Type"), p, tt.status, tt.code)
			}
		})
	}
	if n := f.demo.Bank.Transfers(userToken); n != 0 {
		t.Fatalf("%d transfers", n)
	}
}

func TestHistoryReachesTheTurn(t *testing.T) {
	f := newFixture(t)
	body := `{"threadId":"thread-7","runId":"r","messages":[` +
		`{"id":"s","role":"system","content":"ignored"},` +
		`{"id":"1","role":"user","content":"What's my balance?"},` +
		`{"id":"2","role":"assistant","content":"Your checking balance is $1,234.56."},` +
		`{"id":"3","role":"user","content":[{"type":"text","text":"What's my balance?"}]}]}`
	r := f.run(t, nil, body)
	if r.status != 200 {
		t.Fatalf("%d %v", r.status, r.problem)
	}
	checkSequence(t, r)
	if r.last()["type"] != "RUN_FINISHED" {
		t.Fatalf("end %v", r.last())
	}
}

// TestBodyIsUTF8: a RunAgentInput is JSON, which is UTF-8: a body declaring another charset is
// refused with 415 naming it, before anything runs; utf-8 in any case, or none, is read.
func TestBodyIsUTF8(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		ctype string
		want  int
	}{
		{"application/json; charset=utf-16", 415},
		{"application/json;charset=Windows-1252", 415},
		{"application/json; charset=UTF-8", 200},
		{"application/json", 200},
	} {
		t.Run(tc.ctype, func(t *testing.T) {
			res := f.run(t, http.Header{"Content-Type": {tc.ctype}}, input("t-utf", "r", "what is my balance"))
			if res.status != tc.want {
				t.Fatalf("status %d %v, want %d", res.status, res.problem, tc.want)
			}
			if _, charset, _ := strings.Cut(tc.ctype, "charset="); tc.want == 415 &&
				(res.problem["code"] != engine.CodeUnsupportedMediaType || !strings.Contains(res.problem["detail"].(string), `"`+charset+`"`)) {
				t.Errorf("problem %v, want %s naming %q", res.problem, engine.CodeUnsupportedMediaType, charset)
			}
		})
	}
}
