package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// ErrInvalid is wrapped by every error of a scenario file that is not as the schema says.
var ErrInvalid = errors.New("scenario: invalid scenario")

// Load reads the scenarios of paths: files (.yaml or .yml) or folders, read recursively, their
// files in lexical order. A file holds one scenario, or a list of them. The error joins every
// error found, each as "FILE:LINE: scenario "NAME": turn N: what is wrong", wrapping
// [ErrInvalid] (or the error of a file that could not be read).
func Load(paths ...string) ([]*Scenario, error) {
	var (
		out  []*Scenario
		errs []error
	)
	seen := map[string]*Scenario{}
	for _, p := range paths {
		files, err := scenarioFiles(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			list, err := Parse(f, data)
			errs = append(errs, err)
			for _, s := range list {
				if first, ok := seen[s.Name]; ok && s.Name != "" {
					errs = append(errs, fmt.Errorf("%w: %s:%d: scenario %q: the name is taken by %s:%d", ErrInvalid, s.File, s.Line, s.Name, first.File, first.Line))
					continue
				}
				seen[s.Name] = s
				out = append(out, s)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no scenario files (.yaml, .yml) in %s", ErrInvalid, strings.Join(paths, " "))
	}
	return out, nil
}

// scenarioFiles is p, or the scenario files under the folder p in lexical order.
func scenarioFiles(p string) ([]string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{p}, nil
	}
	var files []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			files = append(files, path)
		}
		return nil
	})
	slices.Sort(files)
	return files, err
}

// yamlLine reads the line of a YAML syntax error.
var yamlLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?`)

// Parse reads the scenarios of one file's data; file names it in errors and in each
// [Scenario].File.
func Parse(file string, data []byte) ([]*Scenario, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := err.Error()
		line := "1"
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			if m[1] != "" {
				line = m[1]
			}
			msg = msg[len(m[0]):]
		}
		return nil, fmt.Errorf("%w: %s:%s: %s", ErrInvalid, file, line, msg)
	}
	p := &parser{file: file}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%w: %s:1: the file holds no scenario", ErrInvalid, file)
	}
	root := doc.Content[0]
	var out []*Scenario
	switch root.Kind {
	case yaml.MappingNode:
		out = append(out, p.scenario(root, 0))
	case yaml.SequenceNode:
		for i, n := range root.Content {
			out = append(out, p.scenario(n, i+1))
		}
	default:
		p.errorf(root, "a scenario file holds a mapping (one scenario) or a list of them")
	}
	return out, errors.Join(p.errs...)
}

// parser reads one file's nodes, collecting its errors.
type parser struct {
	file string
	errs []error
	// where names the scenario and turn being read, for errors.
	where string
}

func (p *parser) errorf(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%w: %s:%d: %s%s", ErrInvalid, p.file, n.Line, p.where, fmt.Sprintf(format, args...)))
}

// fields reads a mapping's keys, each of which must be in known; it reports unknown and
// repeated keys.
func (p *parser) fields(n *yaml.Node, what string, known ...string) map[string]*yaml.Node {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s must be a mapping", what)
		return nil
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case !slices.Contains(known, k.Value):
			p.errorf(k, "%s: unknown key %q (known: %s)", what, k.Value, strings.Join(known, ", "))
		case out[k.Value] != nil:
			p.errorf(k, "%s: key %q given twice", what, k.Value)
		default:
			out[k.Value] = v
		}
	}
	return out
}

func (p *parser) str(n *yaml.Node, key string) string {
	if n == nil {
		return ""
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errorf(n, "%s must be a string", key)
		return ""
	}
	return n.Value
}

func (p *parser) boolean(n *yaml.Node, key string) bool {
	if n == nil {
		return false
	}
	b, err := strconv.ParseBool(n.Value)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || err != nil {
		p.errorf(n, "%s must be true or false", key)
	}
	return b
}

func (p *parser) strings(n *yaml.Node, key string) []string {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s must be a list of strings", key)
		return nil
	}
	out := []string{}
	for _, c := range n.Content {
		out = append(out, p.str(c, key))
	}
	return out
}

// object reads a mapping as JSON values: what arguments and widgets are compared with.
func (p *parser) object(n *yaml.Node, key string) map[string]any {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s must be a mapping", key)
		return nil
	}
	var v map[string]any
	if err := n.Decode(&v); err != nil {
		p.errorf(n, "%s: %v", key, err)
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		p.errorf(n, "%s: not JSON values: %v", key, err)
		return nil
	}
	out := map[string]any{}
	_ = json.Unmarshal(raw, &out)
	return out
}

func (p *parser) regexp(n *yaml.Node, key string) *regexp.Regexp {
	s := p.str(n, key)
	if n == nil || s == "" && n.Kind == yaml.ScalarNode {
		return nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		p.errorf(n, "%s: bad regular expression: %v", key, err)
	}
	return re
}

func (p *parser) scenario(n *yaml.Node, index int) *Scenario {
	s := &Scenario{File: p.file, Line: n.Line}
	p.where = ""
	if index > 0 {
		p.where = fmt.Sprintf("scenario %d of the list: ", index)
	}
	f := p.fields(n, "scenario", "name", "tenant", "environment", "user", "locale", "voice", "tags", "turns")
	if f == nil {
		return s
	}
	s.Name = p.str(f["name"], "name")
	if s.Name != "" {
		p.where = fmt.Sprintf("scenario %q: ", s.Name)
	} else {
		p.errorf(n, "name is required")
	}
	s.Tenant = p.str(f["tenant"], "tenant")
	if s.Tenant == "" {
		p.errorf(n, "tenant is required (an engine key, such as pk_demo)")
	}
	s.Environment = p.str(f["environment"], "environment")
	switch s.Environment {
	case "":
		s.Environment = "production"
	case "production", "staging":
	default:
		p.errorf(f["environment"], "environment: %q is not production or staging", s.Environment)
	}
	s.User = p.str(f["user"], "user")
	if s.User == "" {
		p.errorf(n, "user is required (the user's X-Token)")
	}
	s.Locale = p.str(f["locale"], "locale")
	s.Voice = p.str(f["voice"], "voice")
	s.Tags = p.strings(f["tags"], "tags")
	turns := f["turns"]
	switch {
	case turns == nil:
		p.errorf(n, "turns is required: at least one")
	case turns.Kind != yaml.SequenceNode || len(turns.Content) == 0:
		p.errorf(turns, "turns must be a list of at least one turn")
	default:
		where := p.where
		for i, tn := range turns.Content {
			p.where = fmt.Sprintf("%sturn %d: ", where, i+1)
			t := p.turn(tn)
			if t.Audio && t.Voice == "" {
				t.Voice = s.Voice
			}
			if t.Audio && t.Voice == "" {
				p.errorf(tn, "audio: a spoken turn names the voice of the engine's synthesizer that speaks it, in the turn or the scenario (voice: kal16 of flite, en-us of espeak-ng …)")
			}
			s.Turns = append(s.Turns, t)
		}
		p.where = where
	}
	return s
}

func (p *parser) turn(n *yaml.Node) *Turn {
	t := &Turn{Line: n.Line}
	f := p.fields(n, "turn", "say", "audio", "voice", "locale", "expect", "confirm")
	if f == nil {
		return t
	}
	t.Say = p.str(f["say"], "say")
	if strings.TrimSpace(t.Say) == "" {
		p.errorf(n, "say is required and cannot be empty")
	}
	t.Audio = p.boolean(f["audio"], "audio")
	t.Voice = p.str(f["voice"], "voice")
	t.Locale = p.str(f["locale"], "locale")
	if e := f["expect"]; e != nil {
		p.expect(e, &t.Expect)
	}
	if c := f["confirm"]; c != nil {
		t.Confirm = p.confirmStep(c)
	}
	t.Expect.NoAction = !(t.Expect.Confirm != nil || slices.Contains(t.Expect.Widgets, "confirm") || t.Confirm != nil)
	if na := t.Expect.lines["no_action"]; na != 0 {
		t.Expect.NoAction = t.Expect.explicitNoAction
	}
	return t
}

func (p *parser) expect(n *yaml.Node, e *Expect) {
	f := p.fields(n, "expect", "tools", "no_tools", "tool_calls", "widgets", "widgets_contain", "confirm", "no_action",
		"speech_contains", "speech_not_contains", "speech_matches", "model_not_contains", "language", "error", "max_latency", "judge")
	e.lines = map[string]int{}
	for k, v := range f {
		e.lines[k] = v.Line
	}
	e.Tools = p.strings(f["tools"], "expect.tools")
	e.NoTools = p.boolean(f["no_tools"], "expect.no_tools")
	if tc := f["tool_calls"]; tc != nil {
		if tc.Kind != yaml.SequenceNode {
			p.errorf(tc, "expect.tool_calls must be a list")
		} else {
			for _, c := range tc.Content {
				e.ToolCalls = append(e.ToolCalls, p.toolCall(c))
			}
		}
	}
	e.Widgets = p.strings(f["widgets"], "expect.widgets")
	if wc := f["widgets_contain"]; wc != nil {
		if wc.Kind != yaml.SequenceNode {
			p.errorf(wc, "expect.widgets_contain must be a list of mappings")
		} else {
			for _, c := range wc.Content {
				if w := p.object(c, "expect.widgets_contain"); w != nil {
					e.WidgetsContain = append(e.WidgetsContain, w)
				}
			}
		}
	}
	if c := f["confirm"]; c != nil {
		e.Confirm = p.confirmExpect(c)
	}
	if f["no_action"] != nil {
		e.explicitNoAction = p.boolean(f["no_action"], "expect.no_action")
	}
	e.SpeechContains = p.strings(f["speech_contains"], "expect.speech_contains")
	e.SpeechNotContains = p.strings(f["speech_not_contains"], "expect.speech_not_contains")
	e.SpeechMatches = p.regexp(f["speech_matches"], "expect.speech_matches")
	e.ModelNotContains = p.strings(f["model_not_contains"], "expect.model_not_contains")
	e.Language = p.str(f["language"], "expect.language")
	e.Error = p.str(f["error"], "expect.error")
	if ml := f["max_latency"]; ml != nil {
		d, err := time.ParseDuration(p.str(ml, "expect.max_latency"))
		if err != nil || d <= 0 {
			p.errorf(ml, "expect.max_latency: %q is not a positive duration such as 2s", ml.Value)
		}
		e.MaxLatency = d
	}
	e.Judge = p.str(f["judge"], "expect.judge")
}

func (p *parser) toolCall(n *yaml.Node) ToolCallExpect {
	c := ToolCallExpect{Line: n.Line}
	f := p.fields(n, "expect.tool_calls[]", "name", "args", "args_partial", "args_match")
	if f == nil {
		return c
	}
	c.Name = p.str(f["name"], "expect.tool_calls[].name")
	if c.Name == "" {
		p.errorf(n, "expect.tool_calls[]: name is required")
	}
	c.Args = p.object(f["args"], "expect.tool_calls[].args")
	if f["args"] != nil && c.Args == nil {
		c.Args = map[string]any{}
	}
	c.ArgsPartial = p.object(f["args_partial"], "expect.tool_calls[].args_partial")
	if am := f["args_match"]; am != nil {
		mf := p.fields(am, "expect.tool_calls[].args_match", keysOf(am)...)
		c.ArgsMatch = map[string]*regexp.Regexp{}
		for k, v := range mf {
			if re := p.regexp(v, "expect.tool_calls[].args_match."+k); re != nil {
				c.ArgsMatch[k] = re
			}
		}
	}
	return c
}

// keysOf lists a mapping's keys, for mappings whose keys are free.
func keysOf(n *yaml.Node) []string {
	var out []string
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, n.Content[i].Value)
		}
	}
	return out
}

// decimal reads an exact decimal: digits, an optional point and digits.
var decimal = regexp.MustCompile(`^-?\d+(\.\d+)?$`)

func (p *parser) confirmExpect(n *yaml.Node) *ConfirmExpect {
	c := &ConfirmExpect{}
	f := p.fields(n, "expect.confirm", "amount", "currency", "payee")
	if f == nil {
		return c
	}
	if a := f["amount"]; a != nil {
		c.Amount = p.str(a, "expect.confirm.amount")
		if r, ok := new(big.Rat).SetString(c.Amount); ok && decimal.MatchString(c.Amount) {
			c.amount = r
		} else {
			p.errorf(a, "expect.confirm.amount: %q is not a decimal number such as 20.00", c.Amount)
		}
	}
	c.Currency = p.str(f["currency"], "expect.confirm.currency")
	c.Payee = p.str(f["payee"], "expect.confirm.payee")
	return c
}

func (p *parser) confirmStep(n *yaml.Node) *ConfirmStep {
	c := &ConfirmStep{Line: n.Line, Method: "faceid"}
	f := p.fields(n, "confirm", "method", "expect")
	if f == nil {
		return c
	}
	if m := f["method"]; m != nil {
		c.Method = p.str(m, "confirm.method")
		if !slices.Contains([]string{"faceid", "touchid", "passcode"}, c.Method) {
			p.errorf(m, "confirm.method: %q is not faceid, touchid or passcode", c.Method)
		}
	}
	if e := f["expect"]; e != nil {
		ef := p.fields(e, "confirm.expect", "status", "speech_contains", "error")
		if st := ef["status"]; st != nil {
			c.Expect.Status = p.str(st, "confirm.expect.status")
			if !slices.Contains([]string{StatusDone, StatusDeclined, StatusFailed}, c.Expect.Status) {
				p.errorf(st, "confirm.expect.status: %q is not done, declined or failed", c.Expect.Status)
			}
		}
		c.Expect.SpeechContains = p.strings(ef["speech_contains"], "confirm.expect.speech_contains")
		c.Expect.Error = p.str(ef["error"], "confirm.expect.error")
		if c.Expect.Error != "" && c.Expect.Status != "" && c.Expect.Status != StatusFailed {
			p.errorf(e, "confirm.expect: an error is a failed outcome, not %s", c.Expect.Status)
		}
	}
	return c
}
