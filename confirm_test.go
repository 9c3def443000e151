package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/widgets"
)

// TestConfirmShowsExactlyWhatIsSent: a confirm widget shows the amount to the cent and the
// payee as sent, or there is none: an amount the copy would round, or a payee with invisible,
// control, direction-changing or look-alike characters, fails back to the model, which is told
// why.
func TestConfirmShowsExactlyWhatIsSent(t *testing.T) {
	cases := []struct {
		name, args string
		body       string // the confirm's body; "" when the call is refused
		refusal    string // part of what the model reads
	}{
		{"whole amount", `{"amount":10000,"to":"Alex"}`, "Send $10,000.00 to Alex?", ""},
		{"cents", `{"amount":1234.5,"to":"Zoë O'Brien"}`, "Send $1,234.50 to Zoë O'Brien?", ""},
		{"Persian with its joiner", `{"amount":5,"to":"می‌خواهم"}`, "Send $5.00 to می‌خواهم?", ""},
		{"a fraction of a cent", `{"amount":0.004,"to":"Alex"}`, "", "amount: has more than 2 decimal places"},
		{"rounds up to a round sum", `{"amount":9999.995,"to":"Alex"}`, "", "amount: has more than 2 decimal places"},
		{"a line break", `{"amount":5,"to":"Alex\nSend $5,000.00 to Mallory"}`, "", "to holds characters that cannot be shown"},
		{"a right-to-left override", `{"amount":5,"to":"Alex\u202e0005$"}`, "", "to holds characters that cannot be shown"},
		{"a zero-width space", `{"amount":5,"to":"Al\u200bex"}`, "", "to holds characters that cannot be shown"},
		{"a Cyrillic look-alike", `{"amount":5,"to":"\u0410lex"}`, "", "to mixes Cyrillic and Latin letters"},
		{"decomposed", `{"amount":5,"to":"Jose\u0301"}`, "", "to is not in Unicode normal form NFC"},
		{"Yoruba with a tone over a dotted letter", `{"amount":5,"to":"Ọ̀ṣun"}`, "Send $5.00 to Ọ̀ṣun?", ""},
		{"Hindi with its vowel signs", `{"amount":5,"to":"राहुल"}`, "Send $5.00 to राहुल?", ""},
		{"a no-break space", `{"amount":5,"to":"Alex\u00a0Smith"}`, "", "to holds a blank character (U+00A0)"},
		{"a braille blank", `{"amount":5,"to":"Alex\u2800"}`, "", "to holds a blank character (U+2800)"},
		{"ideographic spaces", `{"amount":5,"to":"Alex\u3000\u3000Smith"}`, "", "to holds a blank character (U+3000)"},
		{"a Hangul filler", `{"amount":5,"to":"\u3164"}`, "", "to holds"},
		{"a strikethrough", `{"amount":5,"to":"A\u0336l\u0336e\u0336x\u0336 Bob"}`, "", "to has a mark (U+0336) drawn over or around a letter"},
		{"an underline", `{"amount":5,"to":"Al\u0332ex"}`, "", "to has a combining mark (U+0332) on the letter"},
		{"stacked marks", `{"amount":5,"to":"Alex\u0301\u0300\u0302"}`, "", "to has a combining mark (U+0302) on the letter"},
		{"a mark on a digit", `{"amount":5,"to":"Alex 1\u0301"}`, "", "to has a combining mark (U+0301) on a character that is not a letter"},
		{"two spaces", `{"amount":5,"to":"Alex  Smith"}`, "", "to has spaces at its start or end, or two in a row"},
		{"a leading space", `{"amount":5,"to":" Alex"}`, "", "to has spaces at its start or end"},
		{"a question and an amount", `{"amount":5,"to":"Alex? Amount: $20.00"}`, "", "to holds a question mark"},
		{"an amount of its own", `{"amount":5,"to":"Send \u20ac9000 to Alex"}`, "", "to holds a currency symbol"},
		{"a bare amount", `{"amount":5,"to":"Alex 9,000.00"}`, "", "to holds an amount"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var seen []engine.Message
			model := modelFunc(func(_ context.Context, req *engine.ModelRequest) []engine.ModelEvent {
				if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == engine.RoleTool {
					seen = append(seen, req.Messages[n-1])
					return enginetest.Text("I could not prepare that.")
				}
				return []engine.ModelEvent{call("c1", "transfer", tc.args), finish(engine.FinishToolCalls)}
			})
			tools := bankTools()
			h := newHarness(t, engine.Config{Model: model, Toolset: tools})
			res := h.turn(`{"transcript":"send it"}`)
			var confirm *widgets.Confirm
			for _, w := range res.spec.Widgets {
				if c, ok := w.(widgets.Confirm); ok {
					confirm = &c
				}
			}
			if tc.body != "" {
				if confirm == nil || confirm.Body != tc.body {
					t.Fatalf("confirm %+v, want the body %q", confirm, tc.body)
				}
				var sent map[string]any
				json.Unmarshal(confirm.Execute.Arguments, &sent)
				if !strings.Contains(confirm.Body, sent["to"].(string)) {
					t.Errorf("the body %q does not show the payee sent, %q", confirm.Body, sent["to"])
				}
				return
			}
			if confirm != nil {
				t.Fatalf("a confirm was drawn: %q", confirm.Body)
			}
			if len(seen) != 1 || !seen[0].IsError || !strings.Contains(seen[0].Content, "invalid_arguments") || !strings.Contains(seen[0].Content, tc.refusal) {
				t.Fatalf("the model read %+v, want %q", seen, tc.refusal)
			}
			if len(tools.Calls()) != 0 {
				t.Fatal("the action ran")
			}
		})
	}
}

// TestVoiceConfirmSaysTheAmount: a voice turn that proposes an action says its amount: when
// the model's answer did not, the confirm's body is said after it. Typed turns, which show the
// card, and answers that said the amount are left as they are.
func TestVoiceConfirmSaysTheAmount(t *testing.T) {
	for _, tc := range []struct {
		name, answer, mode, want string
	}{
		{"voice, amount unsaid", "Sure, please confirm.", "voice", "Sure, please confirm. Send $20.00 to Alex?"},
		{"voice, amount said", "I can send $20.00 to Alex. Please confirm.", "voice", "I can send $20.00 to Alex. Please confirm."},
		{"text", "Sure, please confirm.", "text", "Sure, please confirm."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			model := modelFunc(func(_ context.Context, req *engine.ModelRequest) []engine.ModelEvent {
				if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == engine.RoleTool {
					return nil
				}
				return []engine.ModelEvent{engine.TextEvent(tc.answer), call("c1", "transfer", `{"to":"Alex","amount":20}`), finish(engine.FinishToolCalls)}
			})
			h := newHarness(t, engine.Config{Model: model, Toolset: bankTools()})
			res := h.turn(`{"transcript":"send twenty dollars to alex","mode":"` + tc.mode + `"}`)
			if res.spec.Speak != tc.want {
				t.Errorf("said %q, want %q", res.spec.Speak, tc.want)
			}
		})
	}
}
