package sphinx

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/convengine/engine/intent"
)

func TestGrammarWords(t *testing.T) {
	jsgf := `#JSGF V1.0;
// a comment: ignored words
grammar bank; /* the grammar's name is no word */
import <other.rule>;
public <top> = <balance> | send <amount> to (alex | sam) [please] {transfer};
<balance> = /10/ what is my balance | /0.5/ what's my balance*;
<amount> = twenty dollars+ | "fifty" cents;
`
	got := grammarWords(jsgf)
	want := []string{"alex", "balance", "cents", "dollars", "fifty", "is", "my", "please", "sam", "send", "to", "twenty", "what", "what's"}
	if !slices.Equal(got, want) {
		t.Errorf("grammarWords = %q\nwant %q", got, want)
	}
}

// TestGrammarDictionary: the demo bank's grammar gets a dictionary of its own words, every
// one of them with all its pronunciations, and nothing else.
func TestGrammarDictionary(t *testing.T) {
	if testing.Short() {
		t.Skip("reads pocketsphinx's model")
	}
	models, err := findModels(DefaultModelDir)
	if err != nil {
		t.Fatalf("%v: install it with apt-get install pocketsphinx-en-us", err)
	}
	m := models[0]
	all, err := m.words()
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile("../examples/demobank/intents.yaml")
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		t.Fatal(err)
	}
	jsgf, err := intent.Grammar(j, &intent.GrammarOptions{Known: func(w string) bool {
		_, ok := slices.BinarySearch(all, w)
		return ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	words := grammarWords(jsgf)
	dict, err := m.pronunciations(words)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(dict), "\n"), "\n")
	var heads []string
	for _, l := range lines {
		w, _, _ := strings.Cut(l, " ")
		if i := strings.IndexByte(w, '('); i > 0 {
			heads = append(heads, w[:i])
			continue
		}
		heads = append(heads, w)
	}
	slices.Sort(heads)
	if got := slices.Compact(slices.Clone(heads)); !slices.Equal(got, words) {
		t.Errorf("the dictionary's words differ from the grammar's:\n got %q\nwant %q", got, words)
	}
	if !slices.Contains(lines, "what W AH T") || !slices.Contains(lines, "what(2) HH W AH T") {
		t.Errorf("every pronunciation of what: %q", lines[:min(len(lines), 5)])
	}
	t.Logf("%d words, %d pronunciations, %d bytes, against %d words in the model's dictionary", len(words), len(lines), len(dict), len(all))
}

// TestRunDictionary: the dictionary a run gets reads back whole from where the program is
// told to find it, and nothing is left once the run is over, in memory or in a file.
func TestRunDictionary(t *testing.T) {
	want := []byte("balance B AE L AH N S\nwhat W AH T\nwhat(2) HH W AH T\n")
	memory, err := newRunDictionary(want)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && (memory.file == nil || memory.path != "/dev/fd/4") {
		t.Errorf("on Linux the dictionary is an in-memory file at /dev/fd/4: %+v", memory)
	}
	if memory.file != nil {
		got, err := os.ReadFile(fmt.Sprintf("/proc/self/fd/%d", memory.file.Fd()))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("the in-memory dictionary reads %q, %v", got, err)
		}
	}
	memory.close()

	temp, err := tempDictionary(want)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(temp.path); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the temporary dictionary reads %q, %v", got, err)
	}
	temp.close()
	if _, err := os.Stat(temp.path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary dictionary outlives its run: %v", err)
	}
}
