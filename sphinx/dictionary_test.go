package sphinx

import (
	"os"
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
