package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/internal/locale"
	"github.com/convengine/engine/pii"
)

// pastedForms are a card number and an IBAN as users paste them from statements, PDFs and
// other apps: the number, and the text typed.
var pastedForms = []struct{ name, value, text string }{
	{"card dots", "4539148803436467", "4539.1488.0343.6467"},
	{"card slashes", "4539148803436467", "4539/1488/0343/6467"},
	{"card commas", "4539148803436467", "4539,1488,0343,6467"},
	{"card underscores", "4539148803436467", "4539_1488_0343_6467"},
	{"card en dash", "4539148803436467", "4539–1488–0343–6467"},
	{"card no-break space", "4539148803436467", "4539\u00a01488\u00a00343\u00a06467"},
	{"card two spaces", "4539148803436467", "4539  1488  0343  6467"},
	{"card tab", "4539148803436467", "4539\t1488\t0343\t6467"},
	{"card newline", "4539148803436467", "4539\n1488\n0343\n6467"},
	{"card every digit spaced", "4539148803436467", "4 5 3 9 1 4 8 8 0 3 4 3 6 4 6 7"},
	{"card groups of three", "4539148803436467", "453 914 880 343 646 7"},
	{"card parentheses", "4539148803436467", "(4539) (1488) (0343) (6467)"},
	{"card zero-width space", "4539148803436467", "4539\u200b1488\u200b0343\u200b6467"},
	{"card right-to-left mark", "4539148803436467", "\u200f4539\u200f 1488\u200f 0343\u200f 6467"},
	{"card soft hyphen", "4539148803436467", "4539\u00ad1488\u00ad0343\u00ad6467"},
	{"card combining mark", "4539148803436467", "4\u03015\u030139 1488 0343 6467"},
	{"card circled digits", "4539148803436467", "④⑤③⑨ ①④⑧⑧ ⓪③④③ ⑥④⑥⑦"},
	{"card superscript digits", "4539148803436467", "⁴⁵³⁹ ¹⁴⁸⁸ ⁰³⁴³ ⁶⁴⁶⁷"},
	{"card full-width", "4539148803436467", "４５３９　１４８８　０３４３　６４６７"},
	{"card Arabic-Indic digits", "4539148803436467", "٤٥٣٩ ١٤٨٨ ٠٣٤٣ ٦٤٦٧"},
	{"iban dots", "GB82WEST12345698765432", "GB82.WEST.1234.5698.7654.32"},
	{"iban slashes", "GB82WEST12345698765432", "GB82/WEST/1234/5698/7654/32"},
	{"iban underscores", "GB82WEST12345698765432", "GB82_WEST_1234_5698_7654_32"},
	{"iban en dash", "GB82WEST12345698765432", "GB82–WEST–1234–5698–7654–32"},
	{"iban no-break space", "GB82WEST12345698765432", "GB82\u00a0WEST\u00a01234\u00a05698\u00a07654\u00a032"},
	{"iban tab", "GB82WEST12345698765432", "GB82\tWEST\t1234\t5698\t7654\t32"},
	{"iban newline", "GB82WEST12345698765432", "GB82\nWEST\n1234\n5698\n7654\n32"},
	{"iban zero-width space", "GB82WEST12345698765432", "GB82\u200bWEST\u200b1234\u200b5698\u200b7654\u200b32"},
	{"iban full-width", "GB82WEST12345698765432", "ＧＢ８２　ＷＥＳＴ　１２３４　５６９８　７６５４　３２"},
	{"iban Arabic-Indic digits", "GB82WEST12345698765432", "GB٨٢ WEST ١٢٣٤ ٥٦٩٨ ٧٦٥٤ ٣٢"},
	{"iban circled digits", "GB82WEST12345698765432", "GB⑧② WEST ①②③④ ⑤⑥⑨⑧ ⑦⑥⑤④ ③②"},
}

// TestPrivacyPastedForms: under the banking policy, a card number or an IBAN pasted in any of
// the forms above, typed in the turn or sent back in the history, reaches no model request,
// no log line (the engine's JSON logs, masked as the reference server masks them; a backend's
// error that repeats the number is logged) and no turn-log entry, even when the model writes
// the number back itself, in pieces.
func TestPrivacyPastedForms(t *testing.T) {
	for _, f := range pastedForms {
		for _, where := range []string{"typed", "history"} {
			t.Run(f.name+" "+where, func(t *testing.T) {
				tenant := testTenant()
				tenant.Privacy = json.RawMessage(`{"preset":"banking"}`)
				tools := &enginetest.FuncToolset{
					ToolList: []engine.Tool{{Name: "check", Parameters: json.RawMessage(`{"type":"object","properties":{"number":{"type":"string"}}}`)}},
					Funcs: map[string]func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error){
						"check": func(context.Context, *engine.ToolEnv, engine.ToolCall) (engine.ToolResult, error) {
							return engine.ToolResult{}, errors.New("backend: account locked for " + f.text)
						},
					},
				}
				model := &enginetest.RecordingModel{Answer: func(req *engine.ModelRequest) []engine.ModelEvent {
					if enginetest.StepOf(req.Messages) == 0 {
						ph := "[CARD_1]"
						if strings.HasPrefix(f.name, "iban") {
							ph = "[IBAN_1]"
						}
						return []engine.ModelEvent{enginetest.ToolCall("c1", "check", `{"number":"`+ph+`"}`), engine.FinishEvent(engine.FinishToolCalls)}
					}
					// A model that writes the number back, as it was pasted, streamed two
					// characters a delta: the user's stream must hold each piece back until the
					// number can be masked whole.
					var evs []engine.ModelEvent
					for chunk := range slices.Chunk([]rune("I read "+f.text+", is that right?"), 2) {
						evs = append(evs, engine.TextEvent(string(chunk)))
					}
					return append(evs, engine.FinishEvent(engine.FinishStop))
				}}
				privacy, err := pii.NewPrivacy(nil)
				if err != nil {
					t.Fatal(err)
				}
				logs := &enginetest.Logs{}
				logger := slog.New(privacy.LogHandler(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}), nil))
				turnLog := &recordingTurnLog{MemoryTurnLog: &engine.MemoryTurnLog{}}
				h := newHarness(t, engine.Config{Model: model, Toolset: tools, Privacy: privacy, TurnLog: turnLog, Logger: logger}, tenant)

				said, _ := json.Marshal("my number is " + f.text + ", please check it")
				body := `{"transcript":` + string(said) + `}`
				if where == "history" {
					body = `{"transcript":"please check it","messages":[{"role":"user","content":` + string(said) + `},{"role":"assistant","content":"One moment."}]}`
				}
				res := h.turn(body)

				probe := leakProbe(f.value)
				reqs := model.Requests()
				if len(reqs) != 2 {
					t.Fatalf("the model was called %d times", len(reqs))
				}
				for i, r := range reqs {
					if s := leaked(r, probe); s != "" {
						t.Errorf("model request %d holds the number: %q", i, s)
					}
				}
				if !strings.Contains(logs.String(), "tool call failed") {
					t.Errorf("the backend's error was not logged:\n%s", logs.String())
				}
				for line := range strings.Lines(logs.String()) {
					if s := leaked(line, probe); s != "" {
						t.Errorf("a log line holds the number: %q", s)
					}
				}
				turnLog.mu.Lock()
				defer turnLog.mu.Unlock()
				if len(turnLog.data) == 0 {
					t.Fatal("the turn was not logged")
				}
				for _, d := range turnLog.data {
					if s := leaked(d, probe); s != "" {
						t.Errorf("the turn log holds the number: %q", s)
					}
				}
				if s := leaked(res.spec.Speak, probe); s != "" || !strings.Contains(res.spec.Speak, "••••") {
					t.Errorf("the user was shown %q", res.spec.Speak)
				}
			})
		}
	}
}

// leakProbe is what of a number must appear nowhere: its first eight characters (an IBAN's
// after its country code), when a mask shows no more than the last four.
func leakProbe(value string) string {
	if value[0] >= 'A' && value[0] <= 'Z' {
		return value[2:10]
	}
	return value[:8]
}

// leaked returns the string of s (JSON read as its strings) that holds probe once read as a
// person reads it, "" if none.
func leaked(s, probe string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		v = s
	}
	var found string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if found == "" && strings.Contains(squeeze(x), probe) {
				found = x
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return found
}

// squeeze returns the letters and digits of s in their ASCII compatibility forms, in upper case.
func squeeze(s string) string {
	var b strings.Builder
	for _, r := range norm.NFKC.String(s) {
		switch d := locale.DigitValue(r); {
		case d >= 0:
			b.WriteByte(byte('0' + d))
		case r < unicode.MaxASCII && unicode.IsLetter(r):
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}
