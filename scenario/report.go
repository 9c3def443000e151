package scenario

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// Report is what a run came to: one [Result] per scenario, in the order of the scenarios.
type Report struct {
	Results  []*Result
	Start    time.Time
	Duration time.Duration
	// Interrupted says the run's context ended before the run did: Results holds the
	// scenarios that ran, those cut short failed, and NotRun scenarios did not start.
	Interrupted bool
	NotRun      int
}

// Counts are the results by status.
func (r *Report) Counts() (passed, failed, skipped int) {
	for _, res := range r.Results {
		switch res.Status() {
		case Passed:
			passed++
		case Failed:
			failed++
		case Skipped:
			skipped++
		}
	}
	return
}

// Details are a failed or skipped result's failures in full, then its turns' events.
func (res *Result) Details() string {
	var b strings.Builder
	s := res.Scenario
	fmt.Fprintf(&b, "scenario %q (%s:%d), tenant %s\n", s.Name, s.File, s.Line, s.Tenant)
	if res.Err != nil {
		fmt.Fprintf(&b, "could not run: %v\n", res.Err)
	}
	for _, f := range res.Failures {
		fmt.Fprintf(&b, "FAIL %s\n", f.Message(s))
	}
	for _, j := range res.SkippedJudges() {
		fmt.Fprintf(&b, "SKIP judge (no judge configured): %s\n", j)
	}
	for _, t := range res.Turns {
		fmt.Fprintf(&b, "turn %d: %s", t.Turn, quote(t.Say))
		if t.Transcript != "" {
			fmt.Fprintf(&b, " (heard %s)", quote(t.Transcript))
		}
		b.WriteByte('\n')
		for _, ev := range t.Events {
			fmt.Fprintf(&b, "  %s\n", ev)
		}
		if t.Judge != nil && !t.Judge.Skipped {
			fmt.Fprintf(&b, "  judge %s: pass=%t %s\n", quote(t.Judge.Criterion), t.Judge.Pass, quote(t.Judge.Reason))
		}
	}
	return b.String()
}

// headline is the first failure's message, or why the scenario could not run.
func (res *Result) headline() string {
	switch {
	case res.Err != nil:
		return fmt.Sprintf("scenario %q could not run: %v", res.Scenario.Name, res.Err)
	case len(res.Failures) > 0:
		m := res.Failures[0].Message(res.Scenario)
		if n := len(res.Failures) - 1; n > 0 {
			m += fmt.Sprintf(" (and %d more)", n)
		}
		return m
	}
	return ""
}

// WriteSummary writes the failures and skips in full, then the totals.
func (r *Report) WriteSummary(w io.Writer) error {
	var b strings.Builder
	for _, res := range r.Results {
		if res.Status() == Failed {
			fmt.Fprintf(&b, "\n--- FAIL: %s\n%s", res.Scenario.Name, indent(res.Details()))
		}
	}
	for _, res := range r.Results {
		if res.Status() == Skipped {
			fmt.Fprintf(&b, "\n--- SKIP (judge): %s\n", res.Scenario.Name)
			for _, j := range res.SkippedJudges() {
				fmt.Fprintf(&b, "    %s\n", j)
			}
		}
	}
	passed, failed, skipped := r.Counts()
	if r.Interrupted {
		fmt.Fprintf(&b, "\ninterrupted before the run's end: %d of %d scenarios did not run\n", r.NotRun, len(r.Results)+r.NotRun)
	}
	fmt.Fprintf(&b, "\n%d scenarios: %d passed, %d failed, %d skipped (judge criteria without a judge) in %v\n",
		len(r.Results), passed, failed, skipped, r.Duration.Round(time.Millisecond))
	_, err := io.WriteString(w, b.String())
	return err
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}

// Progress returns a RunnerOptions.Progress that writes to w: on a terminal, one line rewritten
// as scenarios end; otherwise a line per scenario.
func Progress(w io.Writer, terminal bool) func(done, total int, r *Result) {
	failed := 0
	return func(done, total int, r *Result) {
		st := r.Status()
		if st == Failed {
			failed++
		}
		if terminal {
			fmt.Fprintf(w, "\r\033[K[%d/%d] %d failed  %s %s", done, total, failed, strings.ToUpper(st), r.Scenario.Name)
			if done == total {
				fmt.Fprintln(w)
			}
			return
		}
		fmt.Fprintf(w, "%-4s %s (%s) %v\n", strings.ToUpper(st[:4]), r.Scenario.Name, r.Scenario.File, r.Duration.Round(time.Millisecond))
	}
}

// JUnit XML: a testsuite per file, a testcase per scenario.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name      string      `xml:"name,attr"`
		Tests     int         `xml:"tests,attr"`
		Failures  int         `xml:"failures,attr"`
		Skipped   int         `xml:"skipped,attr"`
		Time      string      `xml:"time,attr"`
		Timestamp string      `xml:"timestamp,attr"`
		Cases     []junitCase `xml:"testcase"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitMessage `xml:"failure,omitempty"`
		Skipped   *junitMessage `xml:"skipped,omitempty"`
	}
	junitMessage struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Text    string `xml:",chardata"`
	}
)

// WriteJUnit writes the report as JUnit XML: a testsuite per scenario file, in the order of
// the run, a testcase per scenario, a failure with the first failure's message and the
// details, skipped for a scenario whose judge criteria were not checked. Two runs with the same
// outcomes write the same bytes but for the time and timestamp attributes.
func (r *Report) WriteJUnit(w io.Writer) error {
	out := junitSuites{Name: "scenarios", Time: seconds(r.Duration)}
	index := map[string]int{}
	for _, res := range r.Results {
		s := res.Scenario
		i, ok := index[s.File]
		if !ok {
			i = len(out.Suites)
			index[s.File] = i
			out.Suites = append(out.Suites, junitSuite{Name: s.File, Timestamp: r.Start.UTC().Format(time.RFC3339)})
		}
		suite := &out.Suites[i]
		c := junitCase{Name: s.Name, Classname: strings.TrimSuffix(strings.TrimSuffix(s.File, ".yaml"), ".yml"), Time: seconds(res.Duration)}
		switch res.Status() {
		case Failed:
			typ := "assertion"
			if res.Err != nil {
				typ = "error"
			}
			c.Failure = &junitMessage{Message: res.headline(), Type: typ, Text: res.Details()}
			suite.Failures++
			out.Failures++
		case Skipped:
			c.Skipped = &junitMessage{Message: "judge criteria not checked: no judge configured", Text: strings.Join(res.SkippedJudges(), "\n")}
			suite.Skipped++
			out.Skipped++
		}
		suite.Tests++
		out.Tests++
		suite.Cases = append(suite.Cases, c)
	}
	for i := range out.Suites {
		var d time.Duration
		for _, res := range r.Results {
			if res.Scenario.File == out.Suites[i].Name {
				d += res.Duration
			}
		}
		out.Suites[i].Time = seconds(d)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// The JSON report.
type (
	jsonReport struct {
		Start   time.Time `json:"start"`
		Seconds float64   `json:"seconds"`
		Passed  int       `json:"passed"`
		Failed  int       `json:"failed"`
		Skipped int       `json:"skipped"`
		// Interrupted and NotRun are the Report's, when the run was interrupted.
		Interrupted bool         `json:"interrupted,omitempty"`
		NotRun      int          `json:"not_run,omitempty"`
		Scenarios   []jsonResult `json:"scenarios"`
	}
	jsonResult struct {
		Name     string        `json:"name"`
		File     string        `json:"file"`
		Line     int           `json:"line"`
		Tenant   string        `json:"tenant"`
		Tags     []string      `json:"tags,omitempty"`
		Status   string        `json:"status"`
		Error    string        `json:"error,omitempty"`
		Seconds  float64       `json:"seconds"`
		Failures []jsonFailure `json:"failures,omitempty"`
		Turns    []jsonTurn    `json:"turns"`
	}
	jsonFailure struct {
		Turn     int    `json:"turn,omitempty"`
		Field    string `json:"field"`
		Expected string `json:"expected"`
		Got      string `json:"got"`
		Message  string `json:"message"`
	}
	jsonTurn struct {
		Turn       int            `json:"turn"`
		Say        string         `json:"say"`
		Transcript string         `json:"transcript,omitempty"`
		Speech     string         `json:"speech"`
		Locale     string         `json:"locale,omitempty"`
		Widgets    []string       `json:"widgets"`
		ToolCalls  []ToolCall     `json:"tool_calls"`
		Error      string         `json:"error,omitempty"`
		Message    string         `json:"error_message,omitempty"`
		LatencyMS  float64        `json:"latency_ms"`
		Events     []string       `json:"events"`
		Confirm    *ConfirmResult `json:"confirm,omitempty"`
		Judge      *Verdict       `json:"judge,omitempty"`
	}
)

// WriteJSON writes the report as one JSON object: totals, then each scenario with its status,
// failures and turns (speech, widgets, tool calls with their arguments, events, the confirm
// step's outcome, the judge's verdict and reason).
func (r *Report) WriteJSON(w io.Writer) error {
	passed, failed, skipped := r.Counts()
	out := jsonReport{Start: r.Start.UTC(), Seconds: r.Duration.Seconds(), Passed: passed, Failed: failed, Skipped: skipped,
		Interrupted: r.Interrupted, NotRun: r.NotRun, Scenarios: []jsonResult{}}
	for _, res := range r.Results {
		s := res.Scenario
		jr := jsonResult{Name: s.Name, File: s.File, Line: s.Line, Tenant: s.Tenant, Tags: s.Tags, Status: res.Status(),
			Seconds: res.Duration.Seconds(), Turns: []jsonTurn{}}
		if res.Err != nil {
			jr.Error = res.Err.Error()
		}
		for _, f := range res.Failures {
			jr.Failures = append(jr.Failures, jsonFailure{Turn: f.Turn, Field: f.Field, Expected: f.Expected, Got: f.Got, Message: f.Message(s)})
		}
		for _, t := range res.Turns {
			jt := jsonTurn{Turn: t.Turn, Say: t.Say, Transcript: t.Transcript, Speech: t.Speech, Locale: t.Locale,
				Widgets: []string{}, ToolCalls: t.ToolCalls, Error: t.Error, Message: t.ErrorMessage,
				LatencyMS: float64(t.Latency.Microseconds()) / 1000, Events: t.Events, Confirm: t.Confirm, Judge: t.Judge}
			if jt.ToolCalls == nil {
				jt.ToolCalls = []ToolCall{}
			}
			if t.Spec != nil {
				for _, w := range t.Spec.Widgets {
					jt.Widgets = append(jt.Widgets, w.WidgetType())
				}
			}
			jr.Turns = append(jr.Turns, jt)
		}
		out.Scenarios = append(out.Scenarios, jr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
