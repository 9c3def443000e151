package intent

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/widgets"
)

var (
	checkingStat = widgets.Stat{Label: "Everyday Checking", Value: "$1,234.56", Delta: "+$120.00 this month"}
	// The change of the month in the answer's language, not the bank's English.
	checkingStatES = widgets.Stat{Label: "Everyday Checking", Value: "$1,234.56", Delta: "+$120.00 este mes"}
	checkingStatAR = widgets.Stat{Label: "Everyday Checking", Value: "$1,234.56", Delta: "+$120.00 هذا الشهر"}
	goalProgress   = widgets.Progress{Label: "Trip to Lisbon", Value: 0.65}
	recentRows     = []widgets.ListItem{
		{Title: "Blue Bottle Coffee", Subtitle: "2026-11-20", Trailing: "-$4.50"},
		{Title: "Whole Foods", Subtitle: "2026-11-19", Trailing: "-$82.10"},
		{Title: "Payroll", Subtitle: "2026-11-18", Trailing: "+$2,400.00"},
		{Title: "Lyft", Subtitle: "2026-11-17", Trailing: "-$18.25"},
		{Title: "Netflix", Subtitle: "2026-11-16", Trailing: "-$15.99"},
	}
	enHelp = "I can check your balance, show recent transactions, track your savings goal, or send money."
)

// demoCase is one phrase of the demo bank and the turn it must give.
type demoCase struct {
	locale, text string
	mode         engine.Mode
	// data are the data tool calls, "name arguments"; action the action call, the same way.
	data        []string
	action      string
	speak       string
	widgets     []widgets.Widget
	follow      string
	suggestions []string
}

func TestDemoBank(t *testing.T) {
	tenant := demoTenant(t)
	m := New(&Options{Now: fixedNow})
	if err := m.Check(tenant); err != nil {
		t.Fatalf("Check: %v", err)
	}
	enBalanceSuggestions := []string{"Show my recent transactions", "How's my savings goal?"}
	enGoalSuggestions := []string{"What's my balance?", "Send $20 to Alex"}
	enTxSuggestions := []string{"What's my balance?", "How's my savings goal?"}
	enHelpSuggestions := []string{"What's my balance?", "Show my recent transactions", "How's my savings goal?", "Send $20 to Alex"}
	cases := []demoCase{
		{locale: "en", text: "What's my balance?", data: []string{`get_balance {}`},
			speak: "Your Everyday Checking balance is $1,234.56.", widgets: []widgets.Widget{checkingStat},
			suggestions: enBalanceSuggestions},
		{locale: "en", text: "how much money do I have", data: []string{`get_balance {}`},
			speak: "Your Everyday Checking balance is $1,234.56.", widgets: []widgets.Widget{checkingStat},
			suggestions: enBalanceSuggestions},
		{locale: "en", text: "balance please", data: []string{`get_balance {}`},
			speak: "Your Everyday Checking balance is $1,234.56.", widgets: []widgets.Widget{checkingStat},
			suggestions: enBalanceSuggestions},
		{locale: "en", text: "What's my savings balance?", data: []string{`get_balance {"account":"savings"}`},
			speak:       "Your Rainy Day Savings balance is $5,000.00.",
			widgets:     []widgets.Widget{widgets.Stat{Label: "Rainy Day Savings", Value: "$5,000.00", Delta: "+$50.00 this month"}},
			suggestions: enBalanceSuggestions},
		{locale: "en", mode: engine.ModeVoice, text: "what's my balance", data: []string{`get_balance {}`},
			speak: "You have $1,234.56 in Everyday Checking.", widgets: []widgets.Widget{checkingStat},
			suggestions: enBalanceSuggestions},
		{locale: "en", text: "Show me my recent transactions", data: []string{`list_transactions {"limit":5}`},
			speak:       "Here are your latest transactions. The most recent is Blue Bottle Coffee, -$4.50.",
			widgets:     []widgets.Widget{widgets.List{Title: "Recent transactions", Items: recentRows}},
			suggestions: enTxSuggestions},
		{locale: "en", text: "what did I spend recently", data: []string{`list_transactions {"limit":5}`},
			speak:       "Here are your latest transactions. The most recent is Blue Bottle Coffee, -$4.50.",
			widgets:     []widgets.Widget{widgets.List{Title: "Recent transactions", Items: recentRows}},
			suggestions: enTxSuggestions},
		{locale: "en", text: "How am I doing on my savings goal?", data: []string{`get_savings_goal {}`},
			speak:       "You've saved $1,300.00 of $2,000.00 for Trip to Lisbon. That's 65% of your goal.",
			widgets:     []widgets.Widget{goalProgress},
			suggestions: enGoalSuggestions},
		{locale: "en", text: "send $20 to Alex", action: `transfer {"amount":20,"to":"Alex"}`,
			speak: "I can send $20.00 to Alex. Please confirm.", suggestions: []string{"What's my balance?"}},
		{locale: "en", text: "Transfer twenty dollars to jordan", action: `transfer {"amount":20,"to":"Jordan"}`,
			speak: "I can send $20.00 to Jordan. Please confirm.", suggestions: []string{"What's my balance?"}},
		{locale: "en", text: "pay Sam 15.50", action: `transfer {"amount":15.5,"to":"Sam"}`,
			speak: "I can send $15.50 to Sam. Please confirm.", suggestions: []string{"What's my balance?"}},
		{locale: "en", text: "send one hundred and five dollars to taylor", action: `transfer {"amount":105,"to":"Taylor"}`,
			speak: "I can send $105.00 to Taylor. Please confirm.", suggestions: []string{"What's my balance?"}},
		{locale: "en", text: "I want to send money",
			speak: "How much would you like to send, and to whom? You can pay Alex, Jordan, Sam or Taylor."},
		{locale: "en", text: "send $20 to Bob",
			speak: "How much would you like to send, and to whom? You can pay Alex, Jordan, Sam or Taylor."},
		// Money is never guessed: cents of a hundred or more, sums finer than a cent and sums
		// past what the bank allows give no transfer, typed or heard.
		{locale: "en", text: "send twenty three dollars and four hundred and thirty four cents to Sam",
			speak: "How much would you like to send, and to whom? You can pay Alex, Jordan, Sam or Taylor."},
		{locale: "en", text: "send $20.505 to Alex",
			speak: "How much would you like to send, and to whom? You can pay Alex, Jordan, Sam or Taylor."},
		{locale: "en", text: "send twenty thousand dollars to Alex",
			speak: "How much would you like to send, and to whom? You can pay Alex, Jordan, Sam or Taylor."},
		// What a recognizer keeps of a request whose amount it did not hear for sure
		// (intent.WithoutAmounts) asks for the amount.
		{locale: "en", text: "send money to alex",
			speak: "How much would you like to send, and to whom? You can pay Alex, Jordan, Sam or Taylor."},
		{locale: "en", text: "pay taylor money",
			speak: "How much would you like to send, and to whom? You can pay Alex, Jordan, Sam or Taylor."},
		{locale: "en", text: "i want to pay jordan money",
			speak: "How much would you like to send, and to whom? You can pay Alex, Jordan, Sam or Taylor."},
		{locale: "en", text: "send ten thousand dollars to Alex", action: `transfer {"amount":10000,"to":"Alex"}`,
			speak: "I can send $10,000.00 to Alex. Please confirm.", suggestions: []string{"What's my balance?"}},
		{locale: "en", text: "what can you do", speak: enHelp, suggestions: enHelpSuggestions},
		{locale: "en", text: "What's the weather in Paris?", speak: enHelp, suggestions: enHelpSuggestions},
		{locale: "en", mode: engine.ModeHome, data: []string{`get_balance {}`, `get_savings_goal {}`},
			speak:       "Hi! Your Everyday Checking balance is $1,234.56, and you're 65% of the way to Trip to Lisbon.",
			widgets:     []widgets.Widget{checkingStat, goalProgress},
			follow:      "Ask me about your balance, transactions or savings.",
			suggestions: []string{"Show my recent transactions", "How's my savings goal?", "Send $20 to Alex"}},

		{locale: "es", text: "¿Cuál es mi saldo?", data: []string{`get_balance {}`},
			speak: "Tu saldo de Everyday Checking es $1,234.56.", widgets: []widgets.Widget{checkingStatES},
			suggestions: []string{"Muestra mis últimos movimientos", "¿Cómo va mi meta de ahorro?"}},
		{locale: "es-MX", text: "cuánto dinero tengo", data: []string{`get_balance {}`},
			speak: "Tu saldo de Everyday Checking es $1,234.56.", widgets: []widgets.Widget{checkingStatES},
			suggestions: []string{"Muestra mis últimos movimientos", "¿Cómo va mi meta de ahorro?"}},
		{locale: "es", text: "Muestra mis últimos movimientos", data: []string{`list_transactions {"limit":5}`},
			speak:       "Estos son tus últimos movimientos. El más reciente es Blue Bottle Coffee, -$4.50.",
			widgets:     []widgets.Widget{widgets.List{Title: "Movimientos recientes", Items: recentRows}},
			suggestions: []string{"¿Cuál es mi saldo?", "¿Cómo va mi meta de ahorro?"}},
		{locale: "es", text: "¿Cómo va mi meta de ahorro?", data: []string{`get_savings_goal {}`},
			speak:       "Has ahorrado $1,300.00 de $2,000.00 para Trip to Lisbon. Llevas el 65% de tu meta.",
			widgets:     []widgets.Widget{goalProgress},
			suggestions: []string{"¿Cuál es mi saldo?", "Envía $20 a Alex"}},
		{locale: "es", text: "Envía $20 a Alex", action: `transfer {"amount":20,"to":"Alex"}`,
			speak: "Puedo enviar $20.00 a Alex. Por favor, confirma.", suggestions: []string{"¿Cuál es mi saldo?"}},
		{locale: "es", text: "quiero hacer una transferencia",
			speak: "¿Cuánto quieres enviar y a quién? Puedes pagar a Alex, Jordan, Sam o Taylor."},
		{locale: "es", text: "ayuda",
			speak:       "Puedo consultar tu saldo, mostrar tus últimos movimientos, seguir tu meta de ahorro o enviar dinero.",
			suggestions: []string{"¿Cuál es mi saldo?", "Muestra mis últimos movimientos", "¿Cómo va mi meta de ahorro?", "Envía $20 a Alex"}},
		{locale: "es", mode: engine.ModeHome, data: []string{`get_balance {}`, `get_savings_goal {}`},
			speak:       "¡Hola! Tu saldo de Everyday Checking es $1,234.56, y llevas el 65% de tu meta Trip to Lisbon.",
			widgets:     []widgets.Widget{checkingStatES, goalProgress},
			follow:      "Pregúntame por tu saldo, tus movimientos o tus ahorros.",
			suggestions: []string{"Muestra mis últimos movimientos", "¿Cómo va mi meta de ahorro?", "Envía $20 a Alex"}},

		{locale: "ar", text: "ما هو رصيدي؟", data: []string{`get_balance {}`},
			speak: "رصيد Everyday Checking هو $1,234.56.", widgets: []widgets.Widget{checkingStatAR},
			suggestions: []string{"آخر المعاملات", "هدف الادخار"}},
		{locale: "ar", text: "كم رصيدي", data: []string{`get_balance {}`},
			speak: "رصيد Everyday Checking هو $1,234.56.", widgets: []widgets.Widget{checkingStatAR},
			suggestions: []string{"آخر المعاملات", "هدف الادخار"}},
		// Arabic writes the account with its article: "حساب التوفير", "الحساب الجاري".
		{locale: "ar", text: "رصيد حساب التوفير", data: []string{`get_balance {"account":"savings"}`},
			speak:       "رصيد Rainy Day Savings هو $5,000.00.",
			widgets:     []widgets.Widget{widgets.Stat{Label: "Rainy Day Savings", Value: "$5,000.00", Delta: "+$50.00 هذا الشهر"}},
			suggestions: []string{"آخر المعاملات", "هدف الادخار"}},
		{locale: "ar", text: "رصيد الحساب الجاري", data: []string{`get_balance {"account":"checking"}`},
			speak: "رصيد Everyday Checking هو $1,234.56.", widgets: []widgets.Widget{checkingStatAR},
			suggestions: []string{"آخر المعاملات", "هدف الادخار"}},
		{locale: "ar", text: "آخر المعاملات", data: []string{`list_transactions {"limit":5}`},
			speak:       "إليك آخر معاملاتك. أحدثها Blue Bottle Coffee، -$4.50.",
			widgets:     []widgets.Widget{widgets.List{Title: "آخر المعاملات", Items: recentRows}},
			suggestions: []string{"ما هو رصيدي؟", "هدف الادخار"}},
		{locale: "ar", text: "حوّل 20 دولارًا إلى أليكس", action: `transfer {"amount":20,"to":"Alex"}`,
			speak: "يمكنني تحويل $20.00 إلى Alex. يرجى التأكيد.", suggestions: []string{"ما هو رصيدي؟"}},
		{locale: "ar", text: "أريد تحويل أموال",
			speak: "كم تريد أن تحوّل، وإلى من؟ يمكنك الدفع إلى Alex أو Jordan أو Sam أو Taylor."},
		{locale: "ar", text: "مساعدة",
			speak:       "يمكنني الاطلاع على رصيدك، وعرض آخر معاملاتك، ومتابعة هدف الادخار، وتحويل الأموال.",
			suggestions: []string{"ما هو رصيدي؟", "آخر المعاملات", "هدف الادخار"}},
		{locale: "ar", text: "هدف الادخار", data: []string{`get_savings_goal {}`},
			speak:       "لقد ادّخرت $1,300.00 من $2,000.00 لهدف Trip to Lisbon، أي 65% من هدفك.",
			widgets:     []widgets.Widget{goalProgress},
			suggestions: []string{"ما هو رصيدي؟", "حوّل 20 دولارًا إلى أليكس"}},
		{locale: "ar", mode: engine.ModeHome, data: []string{`get_balance {}`, `get_savings_goal {}`},
			speak:       "مرحبًا! رصيد Everyday Checking هو $1,234.56، وقد بلغت 65% من هدف Trip to Lisbon.",
			widgets:     []widgets.Widget{checkingStatAR, goalProgress},
			follow:      "اسألني عن رصيدك أو معاملاتك أو مدخراتك.",
			suggestions: []string{"آخر المعاملات", "هدف الادخار", "حوّل 20 دولارًا إلى أليكس"}},

		// A locale without copy: the tenant's locale answers.
		{locale: "fr-FR", text: "what's my balance", data: []string{`get_balance {}`},
			speak: "Your Everyday Checking balance is $1,234.56.", widgets: []widgets.Widget{checkingStat},
			suggestions: enBalanceSuggestions},
	}
	for _, tc := range cases {
		t.Run(tc.locale+"/"+string(tc.mode)+"/"+tc.text, func(t *testing.T) {
			req := ask(tenant, tc.locale, tc.text)
			if tc.mode != "" {
				req.Mode = tc.mode
			}
			if tc.mode == engine.ModeHome {
				req.Messages = nil
			}
			checkDemoTurn(t, tc, runTurn(t, m, req, demoBackend))
		})
	}
}

func checkDemoTurn(t *testing.T, tc demoCase, r turnResult) {
	t.Helper()
	var data []string
	for _, c := range r.data {
		data = append(data, c.Name+" "+string(c.Arguments))
	}
	if !slices.Equal(data, tc.data) {
		t.Errorf("data tool calls %q, want %q", data, tc.data)
	}
	if len(tc.data) > 0 && len(r.steps[0].calls) != len(tc.data) {
		t.Errorf("first step made %d calls, want the %d data calls together", len(r.steps[0].calls), len(tc.data))
	}
	if r.text != tc.speak {
		t.Errorf("speak %q\nwant  %q", r.text, tc.speak)
	}
	last := r.steps[len(r.steps)-1]
	if tc.speak != "" && len(last.deltas) < 2 {
		t.Errorf("speech came in %d deltas, want it streamed word by word", len(last.deltas))
	}
	var (
		action, follow string
		ws             []widgets.Widget
		suggestions    []string
	)
	for i, c := range r.ui {
		switch c.Name {
		case widgets.ToolShowStat, widgets.ToolShowList, widgets.ToolShowProgress:
			w, err := widgets.FromToolCall(c.Name, c.Arguments)
			if err != nil {
				t.Errorf("%s %s: %v", c.Name, c.Arguments, err)
			}
			ws = append(ws, w)
		case widgets.ToolSetFollow:
			f, err := widgets.FollowFromToolCall(c.Arguments)
			if err != nil {
				t.Errorf("set_follow %s: %v", c.Arguments, err)
			}
			follow = f
		case widgets.ToolSetSuggestions:
			s, err := widgets.SuggestionsFromToolCall(c.Arguments)
			if err != nil {
				t.Errorf("set_suggestions %s: %v", c.Arguments, err)
			}
			suggestions = s
		default:
			if i != 0 {
				t.Errorf("action call %s after UI calls", c.Name)
			}
			action = c.Name + " " + string(c.Arguments)
		}
	}
	if action != tc.action {
		t.Errorf("action %q, want %q", action, tc.action)
	}
	if !reflect.DeepEqual(ws, tc.widgets) {
		t.Errorf("widgets %+v\nwant    %+v", ws, tc.widgets)
	}
	if follow != tc.follow {
		t.Errorf("follow %q, want %q", follow, tc.follow)
	}
	if !slices.Equal(suggestions, tc.suggestions) {
		t.Errorf("suggestions %q, want %q", suggestions, tc.suggestions)
	}
}

// TestDemoBankSuggestions feeds every suggestion of the demo bank back as the user's next
// message: each must be understood, not fall through to the fallback by accident.
func TestDemoBankSuggestions(t *testing.T) {
	cfg, err := Compile(demoIntents(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range cfg.intents {
		for _, loc := range in.responses.keys {
			for _, s := range in.responses.m[loc].suggestions {
				text := s.render(scope{})
				t.Run(in.name+"/"+loc+"/"+text, func(t *testing.T) {
					if m := cfg.Match(text, fixedNow()); m.Score < cfg.threshold {
						t.Errorf("matched %q with score %.2f, below the threshold", m.Intent, m.Score)
					}
				})
			}
		}
	}
}

// TestDemoBankToolErrors answers every data tool call of the demo with a failure: each intent
// must then say its error copy and show no widget.
func TestDemoBankToolErrors(t *testing.T) {
	tenant := demoTenant(t)
	m := New(&Options{Now: fixedNow})
	failing := func(engine.ToolCall) (string, bool) { return unavailableResult, true }
	cases := []struct{ locale, text, want string }{
		{"en", "what's my balance", "Sorry, I couldn't get your balance just now. Please try again in a moment."},
		{"es", "cuál es mi saldo", "Lo siento, no pude consultar tu saldo. Inténtalo de nuevo en un momento."},
		{"en", "show me my recent transactions", "Sorry, I couldn't reach the bank just now. Please try again in a moment."},
		{"es", "¿Cómo va mi meta de ahorro?", "Lo siento, no pude comunicarme con el banco. Inténtalo de nuevo en un momento."},
		{"ar", "هدف الادخار", "عذرًا، تعذّر الوصول إلى البنك الآن. حاول مرة أخرى بعد قليل."},
	}
	for _, tc := range cases {
		t.Run(tc.locale+"/"+tc.text, func(t *testing.T) {
			r := runTurn(t, m, ask(tenant, tc.locale, tc.text), failing)
			if r.text != tc.want {
				t.Errorf("speak %q, want %q", r.text, tc.want)
			}
			for _, c := range r.ui {
				if c.Name != widgets.ToolSetSuggestions {
					t.Errorf("call %s %s after a failed tool", c.Name, c.Arguments)
				}
			}
		})
	}
}

// The demo's results must decode as the contract says, or the test proves nothing.
func TestDemoResultsAreJSON(t *testing.T) {
	for _, s := range []string{balanceResult, savingsResult, goalResult, transactionsResult, unavailableResult} {
		if !json.Valid([]byte(s)) {
			t.Errorf("invalid JSON: %s", s)
		}
	}
}
