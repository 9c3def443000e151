package scenario_test

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/internal/testkit"
	"github.com/convengine/engine/pii"
	"github.com/convengine/engine/scenario"
)

// transferToAlex is the scenario of docs/testing-tenants.md, written from the docs alone.
const transferToAlex = `name: transfer to Alex
tenant: pk_demo
user: demo-user
turns:
  - say: send 20 dollars to Alex
    expect:
      widgets: [confirm]
      confirm: {amount: AMOUNT, currency: USD, payee: Alex}
      speech_contains: ["Alex"]
`

// TestTransferToAlex: a wrong amount fails naming the scenario, the turn and the field, with
// what was expected, what came and the turn's events; the right one passes.
func TestTransferToAlex(t *testing.T) {
	r := newDemo(t).runner(t, nil)
	rep := runFile(t, r, write(t, "alex.yaml", strings.Replace(transferToAlex, "AMOUNT", "21.00", 1)))
	res := rep.Results[0]
	if res.Status() != scenario.Failed || len(res.Failures) != 1 {
		t.Fatalf("status %s, failures %d:\n%s", res.Status(), len(res.Failures), res.Details())
	}
	msg := res.Failures[0].Message(res.Scenario)
	want := `scenario "transfer to Alex", turn 1 ("send 20 dollars to Alex"): confirm.amount: expected 21.00, got 20`
	if msg != want {
		t.Errorf("failure:\n got %s\nwant %s", msg, want)
	}
	var sum bytes.Buffer
	rep.WriteSummary(&sum)
	for _, s := range []string{want, `widget confirm {"body":"Send $20.00 to Alex?"`, `proposed transfer {"amount":20,"to":"Alex"}`, "0 passed, 1 failed"} {
		if !strings.Contains(sum.String(), s) {
			t.Errorf("the summary lacks %q:\n%s", s, sum.String())
		}
	}

	rep = runFile(t, r, write(t, "alex.yaml", strings.Replace(transferToAlex, "AMOUNT", "20.00", 1)))
	if res := rep.Results[0]; res.Status() != scenario.Passed {
		t.Fatalf("with 20.00: %s\n%s", res.Status(), res.Details())
	}
}

// TestExpectations: each kind of expectation passes when it holds and fails, naming its field,
// when it does not; a confirm widget nobody asked for fails the turn.
func TestExpectations(t *testing.T) {
	r := newDemo(t).runner(t, nil)
	for _, tc := range []struct {
		name, turn string
		field      string // "" passes
	}{
		{"balance", `{say: what is my balance, expect: {tools: [get_balance], widgets: [stat], speech_contains: [balance], language: en}}`, ""},
		{"tool args", `{say: show my recent transactions, expect: {tool_calls: [{name: list_transactions, args_partial: {}}]}}`, ""},
		{"tool args wrong", `{say: what is my balance, expect: {tool_calls: [{name: get_balance, args: {account: savings}}]}}`, "tool_calls"},
		{"args match", `{say: send 20 dollars to Alex, expect: {confirm: {payee: Alex}, tool_calls: [{name: transfer, args_match: {to: "^Al"}}]}}`, ""},
		{"widget fields", `{say: what is my balance, expect: {widgets_contain: [{type: stat, label: Nope}]}}`, "widgets_contain"},
		{"widgets", `{say: what is my balance, expect: {widgets: [list]}}`, "widgets"},
		{"no tools", `{say: what is my balance, expect: {no_tools: true}}`, "no_tools"},
		{"speech not", `{say: what is my balance, expect: {speech_not_contains: [balance]}}`, "speech_not_contains"},
		{"speech matches", `{say: what is my balance, expect: {speech_matches: "^zzz"}}`, "speech_matches"},
		{"language", `{say: what is my balance, expect: {language: es}}`, "language"},
		{"spanish", `{say: cuál es mi saldo, locale: es, expect: {language: es, speech_contains: [saldo]}}`, ""},
		{"unasked action", `{say: send 20 dollars to Alex}`, "no_action"},
		{"action allowed", `{say: send 20 dollars to Alex, expect: {no_action: false}}`, ""},
		{"error expected", `{say: what is my balance, expect: {error: model_error}}`, "error"},
		{"payee", `{say: send 20 dollars to Alex, expect: {confirm: {payee: Jordan}}}`, "confirm.payee"},
		{"currency", `{say: send 20 dollars to Alex, expect: {confirm: {currency: EUR}}}`, "confirm.currency"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "name: " + tc.name + "\ntenant: pk_demo\nuser: u-" + scenario.Slug(tc.name) + "\nturns:\n  - " + tc.turn + "\n"
			res := runFile(t, r, write(t, "s.yaml", src)).Results[0]
			if tc.field == "" {
				if res.Status() != scenario.Passed {
					t.Fatalf("%s\n%s", res.Status(), res.Details())
				}
				return
			}
			if len(res.Failures) == 0 || res.Failures[0].Field != tc.field {
				t.Fatalf("want a failure of %s:\n%s", tc.field, res.Details())
			}
		})
	}
}

// TestConversation: later turns carry the conversation, and a confirm on pk_demo executes the
// action (done, the result's speech checked) with the spec's basic auth.
func TestConversation(t *testing.T) {
	r := newDemo(t).runner(t, nil)
	src := `name: send then check
tenant: pk_demo
user: conversation-user
turns:
  - say: send 20 dollars to Alex
    expect: {confirm: {amount: 20, currency: USD, payee: Alex}}
    confirm:
      method: passcode
      expect: {status: done, speech_contains: ["sent $20.00 to Alex"]}
  - say: what is my balance
    expect: {tools: [get_balance]}
`
	res := runFile(t, r, write(t, "conv.yaml", src)).Results[0]
	if res.Status() != scenario.Passed {
		t.Fatalf("%s\n%s", res.Status(), res.Details())
	}
	if c := res.Turns[0].Confirm; c == nil || c.Status != scenario.StatusDone || !strings.Contains(c.Card, "Money sent") {
		t.Fatalf("confirm: %+v", c)
	}
	calls := res.Turns[0].ToolCalls
	if len(calls) != 1 || !calls[0].Proposed {
		t.Fatalf("turn 1's calls: %+v", calls)
	}
	// A confirm expecting another outcome fails on its status.
	bad := strings.Replace(src, "status: done", "status: declined", 1)
	res = runFile(t, r, write(t, "conv.yaml", bad)).Results[0]
	if len(res.Failures) != 1 || res.Failures[0].Field != "confirm.expect.status" {
		t.Fatalf("want a confirm.expect.status failure:\n%s", res.Details())
	}
}

// TestProofTenant: on pk_demo_proof the runner enrols a test device through the bank's
// enrolment (a one-time code, then the key), binds the session to it and signs the action's
// proof: the bank moves the money. Without enrolment, the action is refused.
func TestProofTenant(t *testing.T) {
	d := newDemo(t)
	src := `name: proof transfer
tenant: pk_demo_proof
user: proof-user
turns:
  - say: send 20 dollars to Alex
    expect: {confirm: {amount: 20.00, payee: Alex}}
    confirm:
      expect: {status: done, speech_contains: [sent]}
`
	res := runFile(t, d.runner(t, nil), write(t, "proof.yaml", src)).Results[0]
	if res.Status() != scenario.Passed {
		t.Fatalf("%s\n%s", res.Status(), res.Details())
	}
	enrolled := false
	r := d.runner(t, &scenario.RunnerOptions{Enrol: func(ctx context.Context, e *scenario.Enrolment) error {
		enrolled = true
		return errors.New("the bank is closed")
	}})
	res = runFile(t, r, write(t, "proof.yaml", src)).Results[0]
	if !enrolled || res.Err == nil || !strings.Contains(res.Err.Error(), "the bank is closed") {
		t.Fatalf("a failed enrolment: %v\n%s", res.Err, res.Details())
	}
	// A device the bank never enrolled: the engine asks the bank and refuses it.
	r = d.runner(t, &scenario.RunnerOptions{Enrol: func(ctx context.Context, e *scenario.Enrolment) error { return nil }})
	res = runFile(t, r, write(t, "proof.yaml", src)).Results[0]
	if res.Err == nil || !strings.Contains(res.Err.Error(), engine.CodeDeviceNotEnrolled) {
		t.Fatalf("an unenrolled device: %v", res.Err)
	}
}

// TestAudioTurn: an audio turn is spoken by the engine's synthesizer and heard by its
// transcriber.
func TestAudioTurn(t *testing.T) {
	d := newDemo(t)
	speech := testkit.WithSpeech(t, engine.Config{})
	d.speech = func(cfg engine.Config) engine.Config {
		cfg.Synthesizer, cfg.Transcriber = speech.Synthesizer, speech.Transcriber
		return cfg
	}
	src := `name: spoken balance
tenant: pk_demo
user: audio-user
turns:
  - say: what is my balance
    audio: true
    voice: en-us
    expect: {tools: [get_balance], widgets: [stat]}
`
	res := runFile(t, d.runner(t, nil), write(t, "audio.yaml", src)).Results[0]
	if res.Status() != scenario.Passed {
		t.Fatalf("%s\n%s", res.Status(), res.Details())
	}
	if tr := res.Turns[0].Transcript; !strings.Contains(tr, "balance") {
		t.Fatalf("heard %q", tr)
	}
}

// TestCheck: what needs the engine is checked before anything runs: a tool the tenant does not
// have, a widget type the engine does not know, an unknown tenant, audio without speech.
func TestCheck(t *testing.T) {
	src := `- name: no such tool
  tenant: pk_demo
  user: u
  turns:
    - say: hello
    - say: what is my balance
      expect:
        tools: [get_weather]
- name: no such widget
  tenant: pk_demo
  user: u
  turns:
    - say: hello
      expect: {widgets: [chart]}
- name: no such tenant
  tenant: pk_nobody
  user: u
  turns: [{say: hello}]
- name: no speech
  tenant: pk_demo
  user: u
  turns: [{say: hello, audio: true, voice: en-us}]
`
	p := write(t, "check.yaml", src)
	list, err := scenario.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	ran := false
	r := newDemo(t).runner(t, &scenario.RunnerOptions{ModelFor: func(*scenario.Scenario) (engine.Model, func() error, error) {
		ran = true
		return nil, nil, nil
	}})
	_, err = r.Run(context.Background(), list)
	if !errors.Is(err, scenario.ErrInvalid) || ran {
		t.Fatalf("Run: %v (ran: %t)", err, ran)
	}
	for _, want := range []string{
		p + `:8: scenario "no such tool": turn 2: expect.tools: tenant "pk_demo" has no tool "get_weather"`,
		p + `:14: scenario "no such widget": turn 1: expect.widgets: the engine has no widget type "chart"`,
		p + `:15: scenario "no such tenant": tenant "pk_nobody"`,
		p + `:22: scenario "no speech": turn 1: audio: the engine has no synthesizer`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
}

// TestCheckVoice: a spoken turn in a voice the engine's synthesizer refuses (a voice it does
// not have, or one of a program that is not installed) fails the run before anything runs,
// with the synthesizer's reason.
func TestCheckVoice(t *testing.T) {
	src := `name: an unknown voice
tenant: pk_demo
user: u
turns: [{say: hello, audio: true, voice: nope}]
`
	p := write(t, "voice.yaml", src)
	list, err := scenario.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	d := newDemo(t)
	d.speech = func(cfg engine.Config) engine.Config {
		cfg.Synthesizer = &testkit.FakeSynthesizer{Rate: 16000, Seconds: 0.1}
		cfg.Transcriber = testkit.TranscriberFunc(func(context.Context, []int16, int, string) (string, error) { return "hello", nil })
		return cfg
	}
	ran := false
	_, err = d.runner(t, &scenario.RunnerOptions{ModelFor: func(*scenario.Scenario) (engine.Model, func() error, error) {
		ran = true
		return nil, nil, nil
	}}).Run(context.Background(), list)
	want := p + `:4: scenario "an unknown voice": turn 1: voice: the engine's synthesizer cannot speak the turn in voice "nope": engine: unknown voice`
	if !errors.Is(err, scenario.ErrInvalid) || ran || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run: %v (ran: %t); want %q", err, ran, want)
	}
}

// TestJudge: a judge criterion is skipped without a judge, and decided by one.
func TestJudge(t *testing.T) {
	src := `name: judged
tenant: pk_demo
user: judge-user
turns:
  - say: what is my balance
    expect: {judge: "the answer states the balance"}
`
	d := newDemo(t)
	res := runFile(t, d.runner(t, nil), write(t, "j.yaml", src)).Results[0]
	if res.Status() != scenario.Skipped {
		t.Fatalf("without a judge: %s", res.Status())
	}
	var seen string
	r := d.runner(t, &scenario.RunnerOptions{Judge: func(ctx context.Context, criterion, conversation string) (bool, string, error) {
		seen = conversation
		return false, "it does not", nil
	}})
	res = runFile(t, r, write(t, "j.yaml", src)).Results[0]
	if res.Status() != scenario.Failed || res.Failures[0].Field != "judge" || !strings.Contains(res.Failures[0].Got, "it does not") {
		t.Fatalf("a judge that says no: %s\n%s", res.Status(), res.Details())
	}
	if !strings.HasPrefix(seen, "User: what is my balance\nAssistant: ") {
		t.Fatalf("the judge was given %q", seen)
	}
}

// TestJUnitDeterministic: two runs of the same scenarios, failing, passing and skipped, write
// the same JUnit XML but for the time and timestamp attributes.
func TestJUnitDeterministic(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"a/alex.yaml":  strings.Replace(transferToAlex, "AMOUNT", "21.00", 1),
		"b/more.yaml":  "- name: balance\n  tenant: pk_demo\n  user: u1\n  turns: [{say: what is my balance, expect: {tools: [get_balance]}}]\n- name: judged\n  tenant: pk_demo\n  user: u2\n  turns: [{say: show my recent transactions, expect: {judge: lists them}}]\n",
		"b/right.yaml": strings.Replace(strings.Replace(transferToAlex, "AMOUNT", "20.00", 1), "transfer to Alex", "transfer right", 1),
	} {
		writeIn(t, dir, name, src)
	}
	list, err := scenario.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := newDemo(t).runner(t, &scenario.RunnerOptions{Parallel: 3})
	times := regexp.MustCompile(` (time|timestamp)="[^"]*"`)
	var runs [2]string
	for i := range runs {
		rep, err := r.Run(context.Background(), list)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := rep.WriteJUnit(&b); err != nil {
			t.Fatal(err)
		}
		runs[i] = times.ReplaceAllString(b.String(), "")
	}
	if runs[0] != runs[1] {
		t.Fatalf("two runs differ:\n%s\n---\n%s", runs[0], runs[1])
	}
	for _, want := range []string{`<testsuite name="` + dir + `/a/alex.yaml" tests="1" failures="1" skipped="0">`,
		`<failure message="scenario &#34;transfer to Alex&#34;, turn 1 (&#34;send 20 dollars to Alex&#34;): confirm.amount: expected 21.00, got 20" type="assertion">`,
		`<skipped message="judge criteria not checked: no judge configured">`} {
		if !strings.Contains(runs[0], want) {
			t.Errorf("the report lacks %s:\n%s", want, runs[0])
		}
	}
}

// TestModelNotContains: a tenant checks its privacy policy from outside: a card number the user
// says is found in what the model received when the engine has no privacy, and passes under the
// demo tenant's banking policy; the failure never quotes the request.
func TestModelNotContains(t *testing.T) {
	src := `name: a card said
tenant: pk_demo
user: u-card
turns:
  - say: is my card 4111-1111-1111-1111 the one ending in 4242
    expect: {tools: [get_card], model_not_contains: ["4111 1111 1111 1111"]}
`
	d := newDemo(t)
	res := runFile(t, d.runner(t, nil), write(t, "card.yaml", src)).Results[0]
	if len(res.Failures) != 1 || res.Failures[0].Field != "model_not_contains" {
		t.Fatalf("without privacy, want a failure of model_not_contains:\n%s", res.Details())
	}
	if msg := res.Failures[0].Expected + " " + res.Failures[0].Got; strings.Contains(msg, "4111-1111") || !strings.Contains(msg, "request 1 of the turn") {
		t.Errorf("the failure says %q", msg)
	}

	privacy, err := pii.NewPrivacy(nil)
	if err != nil {
		t.Fatal(err)
	}
	d.speech = func(cfg engine.Config) engine.Config { cfg.Privacy = privacy; return cfg }
	if res := runFile(t, d.runner(t, nil), write(t, "card.yaml", src)).Results[0]; res.Status() != scenario.Passed {
		t.Fatalf("under the banking policy: %s\n%s", res.Status(), res.Details())
	}
}
