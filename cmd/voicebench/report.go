package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Turn is one utterance said by one voice under one condition, and what came of it.
type Turn struct {
	Utterance string  `json:"utterance"`
	Kind      string  `json:"kind"`
	Expected  string  `json:"expected"`
	Cents     int64   `json:"expected_cents,omitempty"`
	To        string  `json:"expected_to,omitempty"`
	Voice     string  `json:"voice"`
	Family    string  `json:"family"`
	Condition string  `json:"condition"`
	Millis    float64 `json:"ms"`
	Error     string  `json:"error,omitempty"`
	Score
}

// Metrics sum a set of turns. Each rate is over the turns it applies to, which the counts
// beside it give.
type Metrics struct {
	Turns int `json:"turns"`
	// Intent accuracy of demo phrases and of paraphrases; off-topic requests are right when
	// answered without an action widget.
	Demo       int `json:"demo"`
	DemoOK     int `json:"demo_ok"`
	Paraphrase int `json:"paraphrase"`
	ParaOK     int `json:"paraphrase_ok"`
	OffTopic   int `json:"offtopic"`
	OffTopicOK int `json:"offtopic_ok"`
	// Transfers that name an amount and a payee, and those confirmed with exactly them.
	Transfers int `json:"transfers"`
	ArgsOK    int `json:"args_ok"`
	NoAnswer  int `json:"no_answer"`
	// FalseAction counts confirms among the turns that were not transfers.
	NonTransfer int     `json:"non_transfer"`
	FalseAction int     `json:"false_action"`
	Errors      int     `json:"errors"`
	Seconds     float64 `json:"seconds"`
	MeanMillis  float64 `json:"mean_ms"`

	DemoRate        float64 `json:"demo_rate"`
	ParaRate        float64 `json:"paraphrase_rate"`
	OffTopicRate    float64 `json:"offtopic_rate"`
	ArgsRate        float64 `json:"args_rate"`
	NoAnswerRate    float64 `json:"no_answer_rate"`
	FalseActionRate float64 `json:"false_action_rate"`
	TurnsPerSecond  float64 `json:"turns_per_second"`
}

func (m *Metrics) add(t Turn) {
	m.Turns++
	m.MeanMillis += t.Millis // a sum until finish
	if t.Error != "" {
		m.Errors++
	}
	switch t.Kind {
	case kindDemo:
		m.Demo++
		m.DemoOK += b2i(t.IntentOK)
	case kindParaphrase:
		m.Paraphrase++
		m.ParaOK += b2i(t.IntentOK)
	case kindOffTopic:
		m.OffTopic++
		m.OffTopicOK += b2i(t.IntentOK)
	}
	if t.Expected == intentTransfer && t.ArgsExpected() {
		m.Transfers++
		m.ArgsOK += b2i(t.ArgsOK)
	}
	if t.Expected != intentTransfer {
		m.NonTransfer++
		m.FalseAction += b2i(t.FalseAction)
	}
	m.NoAnswer += b2i(t.NoAnswer)
}

// ArgsExpected reports whether the turn's utterance named a transfer's amount and payee.
func (t Turn) ArgsExpected() bool { return t.Expected == intentTransfer && t.Cents > 0 }

func (m *Metrics) finish() {
	ratio := func(a, b int) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	m.DemoRate, m.ParaRate, m.OffTopicRate = ratio(m.DemoOK, m.Demo), ratio(m.ParaOK, m.Paraphrase), ratio(m.OffTopicOK, m.OffTopic)
	m.ArgsRate, m.NoAnswerRate = ratio(m.ArgsOK, m.Transfers), ratio(m.NoAnswer, m.Turns)
	m.FalseActionRate = ratio(m.FalseAction, m.NonTransfer)
	if m.Turns > 0 {
		m.MeanMillis /= float64(m.Turns)
	}
	if m.Seconds > 0 {
		m.TurnsPerSecond = float64(m.Turns) / m.Seconds
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Cell is the metrics of one condition and one voice, or one voice family.
type Cell struct {
	Condition string `json:"condition"`
	Family    string `json:"family"`
	Voice     string `json:"voice,omitempty"`
	Metrics
}

// Confusion is one utterance heard wrongly the same way, however many times.
type Confusion struct {
	Expected  string   `json:"expected"`
	Said      string   `json:"said"`
	Heard     string   `json:"heard"`
	Got       string   `json:"got"`
	Arguments string   `json:"arguments,omitempty"`
	Count     int      `json:"count"`
	Where     []string `json:"where"`
}

// Report is the whole run, as the JSON file holds it.
type Report struct {
	Label      string       `json:"label,omitempty"`
	Engine     string       `json:"engine"`
	Revision   string       `json:"revision,omitempty"`
	Started    time.Time    `json:"started"`
	Seconds    float64      `json:"seconds"`
	SynthSecs  float64      `json:"synthesis_seconds"`
	Parallel   int          `json:"parallel"`
	Quick      bool         `json:"quick"`
	Voices     []Voice      `json:"voices"`
	Notes      []string     `json:"notes,omitempty"`
	Conditions []Condition  `json:"conditions"`
	Utterances []Utterance  `json:"utterances"`
	Families   []Cell       `json:"by_family"`
	ByVoice    []Cell       `json:"by_voice"`
	ByIntent   []IntentCell `json:"by_intent"`
	// The wrong turns, grouped: FalseActions are the confirms of what was not a transfer,
	// Misheard the other wrong answers, Unheard the utterances that got no answer.
	FalseActions []Confusion `json:"false_actions"`
	Misheard     []Confusion `json:"misheard"`
	Unheard      []Confusion `json:"unheard"`
	Turns        []Turn      `json:"turns"`
}

// IntentCell is how often one expected intent was answered right, over every voice and
// condition.
type IntentCell struct {
	Intent   string  `json:"intent"`
	Turns    int     `json:"turns"`
	OK       int     `json:"ok"`
	NoAnswer int     `json:"no_answer"`
	Rate     float64 `json:"rate"`
}

// summarize fills the report's tables from its turns; cellSecs is the wall time of each
// condition and voice, keyed "condition/voice".
func (r *Report) summarize(cellSecs map[string]float64, maxConfusions int) {
	byVoice := map[string]*Cell{}
	byFamily := map[string]*Cell{}
	byIntent := map[string]*IntentCell{}
	for _, t := range r.Turns {
		kv, kf := t.Condition+"/"+t.Voice, t.Condition+"/"+t.Family
		if byVoice[kv] == nil {
			byVoice[kv] = &Cell{Condition: t.Condition, Family: t.Family, Voice: t.Voice}
			byVoice[kv].Seconds = cellSecs[kv]
			if byFamily[kf] == nil {
				byFamily[kf] = &Cell{Condition: t.Condition, Family: t.Family}
			}
			byFamily[kf].Seconds += cellSecs[kv]
		}
		byVoice[kv].add(t)
		byFamily[kf].add(t)
		ik := t.Expected
		if t.Expected == intentTransfer && !t.ArgsExpected() {
			ik = "transfer (no amount)"
		}
		if byIntent[ik] == nil {
			byIntent[ik] = &IntentCell{Intent: ik}
		}
		byIntent[ik].Turns++
		byIntent[ik].OK += b2i(t.IntentOK)
		byIntent[ik].NoAnswer += b2i(t.NoAnswer)
	}
	order := func(c *Cell) (int, string, string) {
		return slices.IndexFunc(r.Conditions, func(x Condition) bool { return x.Name == c.Condition }), c.Family, c.Voice
	}
	collect := func(m map[string]*Cell) []Cell {
		var out []Cell
		for _, c := range m {
			c.finish()
			out = append(out, *c)
		}
		slices.SortFunc(out, func(a, b Cell) int {
			ai, af, av := order(&a)
			bi, bf, bv := order(&b)
			return cmp.Or(cmp.Compare(ai, bi), cmp.Compare(af, bf), cmp.Compare(av, bv))
		})
		return out
	}
	r.ByVoice, r.Families = collect(byVoice), collect(byFamily)
	r.ByIntent = nil
	for _, c := range byIntent {
		c.Rate = float64(c.OK) / float64(c.Turns)
		r.ByIntent = append(r.ByIntent, *c)
	}
	slices.SortFunc(r.ByIntent, func(a, b IntentCell) int {
		return cmp.Or(cmp.Compare(a.Rate, b.Rate), strings.Compare(a.Intent, b.Intent))
	})
	r.FalseActions = confusions(r.Turns, maxConfusions, func(t Turn) bool { return t.FalseAction })
	r.Misheard = confusions(r.Turns, maxConfusions, func(t Turn) bool { return !t.FalseAction && !t.NoAnswer })
	r.Unheard = confusions(r.Turns, maxConfusions, func(t Turn) bool { return t.NoAnswer })
}

// cellSeconds returns the wall time of each condition and voice of a saved report, for
// summarize.
func (r *Report) cellSeconds() map[string]float64 {
	out := map[string]float64{}
	for _, c := range r.ByVoice {
		out[c.Condition+"/"+c.Voice] = c.Seconds
	}
	return out
}

// confusions groups the wrong turns that pick chooses by what was said and what was heard,
// most frequent first. A transfer confirmed with the wrong arguments is wrong too.
func confusions(turns []Turn, n int, pick func(Turn) bool) []Confusion {
	groups := map[string]*Confusion{}
	var keys []string
	for _, t := range turns {
		if (t.IntentOK && (t.ArgsOK || !t.ArgsExpected())) || !pick(t) {
			continue
		}
		heard := t.Transcript
		switch {
		case t.Error != "":
			heard = "(error: " + t.Error + ")"
		case t.Problem != "":
			heard = "(" + t.Problem + ")"
		case t.NoAnswer && heard == "":
			heard = "(not understood)"
		}
		k := t.Utterance + "\x00" + heard + "\x00" + t.Got
		c := groups[k]
		if c == nil {
			c = &Confusion{Expected: t.Expected, Said: t.Utterance, Heard: heard, Got: t.Got}
			var args bytes.Buffer
			if t.Got == intentTransfer && json.Compact(&args, t.Arguments) == nil {
				c.Arguments = args.String()
			}
			groups[k] = c
			keys = append(keys, k)
		}
		c.Count++
		c.Where = append(c.Where, t.Voice+"/"+t.Condition)
	}
	out := make([]Confusion, 0, len(keys))
	for _, k := range keys {
		out = append(out, *groups[k])
	}
	slices.SortStableFunc(out, func(a, b Confusion) int { return cmp.Compare(b.Count, a.Count) })
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// markdown writes the report's tables.
func (r *Report) markdown(w io.Writer) {
	fmt.Fprintf(w, "# voicebench: speech recognition through POST /engine\n\n")
	if r.Label != "" {
		fmt.Fprintf(w, "%s\n\n", r.Label)
	}
	fmt.Fprintf(w, "- engine: %s\n", r.Engine)
	if r.Revision != "" {
		fmt.Fprintf(w, "- voicebench built from: %s\n", r.Revision)
	}
	fmt.Fprintf(w, "- started %s; %d turns in %s (synthesis %s), %d at a time\n",
		r.Started.UTC().Format(time.RFC3339), len(r.Turns), round(r.Seconds), round(r.SynthSecs), r.Parallel)
	kinds := map[string]int{}
	for _, u := range r.Utterances {
		kinds[u.Kind]++
	}
	fmt.Fprintf(w, "- %d utterances: %d demo phrases, %d paraphrases, %d off-topic\n",
		len(r.Utterances), kinds[kindDemo], kinds[kindParaphrase], kinds[kindOffTopic])
	var vs []string
	for _, v := range r.Voices {
		vs = append(vs, v.String())
	}
	fmt.Fprintf(w, "- voices: %s\n", strings.Join(vs, ", "))
	for _, n := range r.Notes {
		fmt.Fprintf(w, "- note: %s\n", n)
	}
	for _, c := range r.Conditions {
		fmt.Fprintf(w, "- condition %s: %s\n", c.Name, c.Description)
	}
	fmt.Fprintf(w, "\nIntent accuracy is over demo phrases and paraphrases; off-topic is right when answered without an "+
		"action widget; args is transfers that name an amount and payee confirmed with exactly them; no answer "+
		"(no_speech, nothing heard, \"didn't catch that\") is over all turns; false action is a confirm over all "+
		"turns that were not transfers.\n")

	fmt.Fprintf(w, "\n## By condition and voice family\n\n")
	cellTable(w, r.Families, false)
	fmt.Fprintf(w, "\n## By condition and voice\n\n")
	cellTable(w, r.ByVoice, true)

	fmt.Fprintf(w, "\n## By expected intent (all voices and conditions)\n\n")
	fmt.Fprintf(w, "| expected | turns | right | no answer |\n|---|--:|--:|--:|\n")
	for _, c := range r.ByIntent {
		fmt.Fprintf(w, "| %s | %d | %s | %s |\n", c.Intent, c.Turns, pct(c.OK, c.Turns), pct(c.NoAnswer, c.Turns))
	}

	// False actions apart: they are the ones that would cost a user money.
	fmt.Fprintf(w, "\n## False actions: a confirm for what was not a transfer (%d kinds shown)\n\n", len(r.FalseActions))
	confusionTable(w, r.FalseActions)
	fmt.Fprintf(w, "\n## Worst confusions: heard as something else (%d kinds shown)\n\n", len(r.Misheard))
	confusionTable(w, r.Misheard)
	fmt.Fprintf(w, "\n## Not heard: no answer (%d kinds shown)\n\n", len(r.Unheard))
	confusionTable(w, r.Unheard)
}

func confusionTable(w io.Writer, cs []Confusion) {
	fmt.Fprintf(w, "| expected | said | heard | answered as | times | where |\n|---|---|---|---|--:|---|\n")
	for _, c := range cs {
		got := c.Got
		if c.Arguments != "" {
			got += " " + c.Arguments
		}
		where := c.Where
		if len(where) > 4 {
			where = append(slices.Clone(where[:4]), fmt.Sprintf("+%d", len(c.Where)-4))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %s |\n", c.Expected, c.Said, mdEscape(c.Heard), mdEscape(got), c.Count, strings.Join(where, ", "))
	}
}

func cellTable(w io.Writer, cells []Cell, voice bool) {
	name := "family"
	if voice {
		name = "voice"
	}
	fmt.Fprintf(w, "| condition | %s | turns | demo intent | paraphrase intent | off-topic ok | transfer args | no answer | false action | turns/s |\n", name)
	fmt.Fprintf(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, c := range cells {
		v := c.Family
		if voice {
			v = c.Voice
		}
		errs := ""
		if c.Errors > 0 {
			errs = fmt.Sprintf(" (%d errors)", c.Errors)
		}
		fmt.Fprintf(w, "| %s | %s | %d%s | %s | %s | %s | %s | %s | %s | %.2f |\n", c.Condition, v, c.Turns, errs,
			pct(c.DemoOK, c.Demo), pct(c.ParaOK, c.Paraphrase), pct(c.OffTopicOK, c.OffTopic), pct(c.ArgsOK, c.Transfers),
			pct(c.NoAnswer, c.Turns), pct(c.FalseAction, c.NonTransfer), c.TurnsPerSecond)
	}
}

func pct(a, b int) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%% (%d/%d)", 100*float64(a)/float64(b), a, b)
}

func round(secs float64) time.Duration {
	return time.Duration(secs * float64(time.Second)).Round(time.Second)
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
