package scenario_test

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/convengine/engine/scenario"
)

// TestLoadErrors: a file that is not as the schema says is refused with FILE:LINE, the scenario
// and the turn, and every error of a run is reported together.
func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string // each with FILE in front
	}{
		{"syntax", "name: x\ntenant: pk_demo\nturns:\n  - say: hi: there\n", []string{":4: mapping values are not allowed in this context"}},
		{"unknown key", "name: typo\ntenant: pk_demo\nuser: u\nturns:\n  - say: hi\n    expect:\n      speech_contain: [hi]\n",
			[]string{`:7: scenario "typo": turn 1: expect: unknown key "speech_contain"`}},
		{"bad regex", "name: re\ntenant: pk_demo\nuser: u\nturns:\n  - say: hi\n  - say: hi\n    expect: {speech_matches: \"(unclosed\"}\n",
			[]string{`:7: scenario "re": turn 2: expect.speech_matches: bad regular expression: error parsing regexp: missing closing )`}},
		{"several", "- name: a\n  tenant: pk_demo\n  user: u\n  turns:\n    - say: \"\"\n    - say: hi\n      expect: {max_latency: soon}\n- tenant: pk_demo\n  user: u\n  turns: []\n  colour: red\n",
			[]string{`:5: scenario "a": turn 1: say is required`, `:7: scenario "a": turn 2: expect.max_latency: "soon" is not a positive duration`,
				`:8: scenario 2 of the list: name is required`, `:10: scenario 2 of the list: turns must be a list of at least one turn`,
				`:11: scenario 2 of the list: scenario: unknown key "colour"`}},
		{"bad values", "name: v\ntenant: pk_demo\nuser: u\nturns:\n  - say: hi\n    expect: {confirm: {amount: twenty}}\n    confirm: {method: retina, expect: {status: maybe}}\n",
			[]string{`:6: scenario "v": turn 1: expect.confirm.amount: "twenty" is not a decimal number`, `:7: scenario "v": turn 1: confirm.method: "retina"`,
				`:7: scenario "v": turn 1: confirm.expect.status: "maybe"`}},
		{"spoken without a voice", "name: said\ntenant: pk_demo\nuser: u\nturns:\n  - say: hi\n  - say: what is my balance\n    audio: true\n",
			[]string{`:6: scenario "said": turn 2: audio: a spoken turn names the voice of the engine's synthesizer that speaks it`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, "s.yaml", tc.src)
			_, err := scenario.Load(p)
			if !errors.Is(err, scenario.ErrInvalid) {
				t.Fatalf("Load: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), p+w) {
					t.Errorf("the error lacks %q:\n%v", p+w, err)
				}
			}
		})
	}
}

// TestLoadFolder: a folder is read recursively, its files in lexical order; names are unique
// within a run.
func TestLoadFolder(t *testing.T) {
	dir := t.TempDir()
	one := "name: NAME\ntenant: pk_demo\nuser: u\nturns: [{say: hi}]\n"
	writeIn(t, dir, "b.yaml", strings.Replace(one, "NAME", "b", 1))
	writeIn(t, dir, "a/z.yml", strings.Replace(one, "NAME", "a/z", 1))
	writeIn(t, dir, "a/notes.txt", "not a scenario")
	writeIn(t, dir, "c.yaml", "- "+strings.ReplaceAll(strings.Replace(one, "NAME", "c1", 1), "\n", "\n  ")+"\n- "+strings.ReplaceAll(strings.Replace(one, "NAME", "c2", 1), "\n", "\n  "))
	list, err := scenario.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range list {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); got != "a/z b c1 c2" {
		t.Fatalf("order %q", got)
	}
	if s := list[0]; s.Environment != "production" || len(s.Turns) != 1 || !s.Turns[0].Expect.NoAction {
		t.Fatalf("defaults: %+v %+v", s, s.Turns[0].Expect)
	}
	writeIn(t, dir, "d.yaml", strings.Replace(one, "NAME", "b", 1))
	if _, err := scenario.Load(dir); err == nil || !strings.Contains(err.Error(), `d.yaml:1: scenario "b": the name is taken by `+dir+"/b.yaml:1") {
		t.Fatalf("a name twice: %v", err)
	}
}

// FuzzParse: no file makes Parse panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(strings.Replace(transferToAlex, "AMOUNT", "20.00", 1)))
	f.Add([]byte("- name: a\n  turns: [{say: hi, expect: {tool_calls: [{name: x, args_match: {a: \"(\"}}]}}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		scenario.Parse("f.yaml", data)
	})
}

// TestLoadVoice: a spoken turn is spoken in its own voice, else in the scenario's.
func TestLoadVoice(t *testing.T) {
	src := "name: voices\ntenant: pk_demo\nuser: u\nvoice: kal16\nturns:\n  - say: hi\n    audio: true\n  - say: hola\n    audio: true\n    voice: es\n  - say: typed\n"
	list, err := scenario.Load(write(t, "v.yaml", src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, turn := range list[0].Turns {
		got = append(got, turn.Voice)
	}
	if want := []string{"kal16", "es", ""}; !slices.Equal(got, want) {
		t.Errorf("voices %q, want %q", got, want)
	}
}

// TestLoadBounds: a scenario file holds at most MaxFileSize bytes and a scenario at most
// MaxTurns turns; past either, the file is refused naming it and the bound, before its turns
// are read. The demo bank's scenarios fit with room to spare.
func TestLoadBounds(t *testing.T) {
	turns := func(n int) string {
		return "name: long\ntenant: pk_demo\nuser: u\nturns:\n" + strings.Repeat("  - say: hi\n", n)
	}
	if list, err := scenario.Load(write(t, "max.yaml", turns(scenario.MaxTurns))); err != nil || len(list[0].Turns) != scenario.MaxTurns {
		t.Fatalf("%d turns: %v", scenario.MaxTurns, err)
	}
	for _, tc := range []struct {
		name, src, want string
	}{
		{"turns", turns(scenario.MaxTurns + 1), `:5: scenario "long": 1001 turns, more than the 1000 a scenario may have`},
		{"turns of the second scenario", "- name: short\n  tenant: pk_demo\n  user: u\n  turns: [{say: hi}]\n- " +
			strings.ReplaceAll(turns(scenario.MaxTurns+5), "\n", "\n  "), `:9: scenario "long": 1005 turns, more than the 1000 a scenario may have`},
		{"size", turns(scenario.MaxFileSize/12 + 1), ": the file is larger than the 1 MiB a scenario file may hold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, "big.yaml", tc.src)
			_, err := scenario.Load(p)
			if !errors.Is(err, scenario.ErrInvalid) || !strings.Contains(err.Error(), p+tc.want) {
				t.Fatalf("Load: %v, want %q", err, p+tc.want)
			}
			if _, err := scenario.Parse(p, []byte(tc.src)); !errors.Is(err, scenario.ErrInvalid) || !strings.Contains(err.Error(), p+tc.want) {
				t.Fatalf("Parse: %v, want %q", err, p+tc.want)
			}
		})
	}

	for _, dir := range []string{"../examples/demobank/scenarios", "../examples/demobank/scenarios-openai"} {
		list, err := scenario.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			if st, err := os.Stat(s.File); err != nil || st.Size() > scenario.MaxFileSize/16 || len(s.Turns) > scenario.MaxTurns/16 {
				t.Errorf("%s: scenario %q (%d turns) is near the bounds", s.File, s.Name, len(s.Turns))
			}
		}
	}
}
