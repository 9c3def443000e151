package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/widgets"
)

// What an answer amounts to, besides the intents' own names.
const (
	gotAsk      = "transfer_ask" // the question for a transfer's amount and payee
	gotNoAnswer = "no_answer"    // no_speech, nothing heard, or "didn't catch that"
	gotOther    = "other"        // none of the demo's answers
)

// unclearPrefix begins the engine's answer to speech it heard but did not understand.
const unclearPrefix = "Sorry, I didn't catch that"

// Answer is what the engine answered one turn: a problem before the stream, or the render
// spec of its done event.
type Answer struct {
	Status  int
	Problem string // the problem's code, when Status is not 200
	Spec    widgets.Spec
}

// Score is one turn, scored.
type Score struct {
	Got         string          `json:"got"`
	Transcript  string          `json:"transcript"`
	Speak       string          `json:"speak,omitempty"`
	Widgets     []string        `json:"widgets,omitempty"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	Problem     string          `json:"problem,omitempty"`
	IntentOK    bool            `json:"intent_ok"`
	ArgsOK      bool            `json:"args_ok"`
	NoAnswer    bool            `json:"no_answer"`
	FalseAction bool            `json:"false_action"`
}

// answerLines are the demo's answers that carry no widget, by which they are told apart.
type answerLines struct {
	Help string // the help intent's answer, which is also the fallback's
	Ask  string // the transfer's question for its missing slots
}

// demoLines reads the answers from the demo tenant itself, so that the scorer follows edits
// to intents.yaml.
func demoLines() (answerLines, error) {
	t, err := demobank.Tenant("http://127.0.0.1:1", "")
	if err != nil {
		return answerLines{}, err
	}
	var cfg struct {
		Intents []struct {
			Name      string
			Responses map[string]struct{ Speak, Ask string }
		}
	}
	if err := json.Unmarshal(t.Intents, &cfg); err != nil {
		return answerLines{}, err
	}
	var l answerLines
	for _, in := range cfg.Intents {
		switch in.Name {
		case intentHelp:
			l.Help = in.Responses["en"].Speak
		case intentTransfer:
			l.Ask = in.Responses["en"].Ask
		}
	}
	if l.Help == "" || l.Ask == "" {
		return l, errors.New("the demo tenant has no English help answer or transfer question")
	}
	return l, nil
}

// score judges a against u.
func (l answerLines) score(u Utterance, a Answer) Score {
	s := Score{Transcript: a.Spec.Meta.Transcript, Speak: a.Spec.Speak, Problem: a.Problem}
	var confirm *widgets.Confirm
	for _, w := range a.Spec.Widgets {
		s.Widgets = append(s.Widgets, w.WidgetType())
		if c, ok := w.(widgets.Confirm); ok && confirm == nil {
			confirm = &c
			s.Arguments = c.Execute.Arguments
		}
	}
	s.NoAnswer = a.Problem == "no_speech" || a.Spec.Meta.Error == "no_speech" ||
		(a.Status == 200 && strings.TrimSpace(s.Transcript) == "") || strings.HasPrefix(s.Speak, unclearPrefix)
	s.Got = l.classify(a, s.Widgets, confirm != nil, s.NoAnswer)

	switch {
	case u.Intent == intentNone:
		// Whatever it says, an answer without an action widget does no harm.
		s.IntentOK = len(s.Widgets) == 0
	case u.complete():
		// The transfer was understood if its confirm came, or the question for what it missed.
		s.IntentOK = s.Got == intentTransfer || s.Got == gotAsk
		s.ArgsOK = confirm != nil && argsMatch(confirm.Execute.Arguments, u.Cents, u.To)
	case u.Intent == intentTransfer:
		// Without an amount the only right answer is the question: a confirm made one up.
		s.IntentOK = s.Got == gotAsk
	default:
		s.IntentOK = s.Got == u.Intent
	}
	s.FalseAction = confirm != nil && u.Intent != intentTransfer
	return s
}

// classify names what an answer is, from its widgets and, for those without, its words.
func (l answerLines) classify(a Answer, types []string, confirm, noAnswer bool) string {
	has := func(t string) bool {
		for _, x := range types {
			if x == t {
				return true
			}
		}
		return false
	}
	switch {
	case confirm:
		return intentTransfer
	case has(widgets.TypeStat) && has(widgets.TypeProgress):
		return intentHome
	case has(widgets.TypeStat):
		return intentBalance
	case has(widgets.TypeList):
		return intentTransactions
	case has(widgets.TypeProgress):
		return intentSavings
	case noAnswer:
		return gotNoAnswer
	case a.Spec.Speak == l.Help:
		return intentHelp
	case a.Spec.Speak == l.Ask:
		return gotAsk
	}
	return gotOther
}

// argsMatch reports whether a confirm's arguments are exactly amount cents to payee to. The
// amount may be a JSON number or a string; it must be the same number of cents, not near it.
func argsMatch(raw json.RawMessage, cents int64, to string) bool {
	var args struct {
		Amount json.RawMessage `json:"amount"`
		To     string          `json:"to"`
	}
	if json.Unmarshal(raw, &args) != nil || !strings.EqualFold(args.To, to) {
		return false
	}
	got, err := parseCents(args.Amount)
	return err == nil && got == cents
}

func parseCents(raw json.RawMessage) (int64, error) {
	text := strings.Trim(string(raw), `"`)
	r, ok := new(big.Rat).SetString(text)
	if !ok {
		return 0, fmt.Errorf("amount %s is not a number", raw)
	}
	r.Mul(r, big.NewRat(100, 1))
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, fmt.Errorf("amount %s is not a whole number of cents", raw)
	}
	return r.Num().Int64(), nil
}
