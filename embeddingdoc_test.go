package engine_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestEmbeddingDocQuotesTheExamples: every Go block of docs/embedding.md marked as a snippet
// of an example program is found, as it is, in that program, which the suite compiles and
// tests: the guide shows code that runs.
func TestEmbeddingDocQuotesTheExamples(t *testing.T) {
	for doc, least := range map[string]int{"docs/embedding.md": 6, "docs/actions.md": 2} {
		testDocQuotes(t, doc, least)
	}
}

func testDocQuotes(t *testing.T, path string, least int) {
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)<!-- snippet: (\\S+) -->\n```go\n(.*?)\n```").FindAllStringSubmatch(string(doc), -1)
	if len(blocks) < least {
		t.Fatalf("%d snippets in %s", len(blocks), path)
	}
	for _, b := range blocks {
		src, err := os.ReadFile(b[1])
		if err != nil {
			t.Errorf("a snippet of %s: %v", b[1], err)
			continue
		}
		if !strings.Contains(string(src), b[2]) {
			t.Errorf("%s quotes %s, which no longer has:\n%s", path, b[1], b[2])
		}
	}
}
