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
	doc, err := os.ReadFile("docs/embedding.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)<!-- snippet: (\\S+) -->\n```go\n(.*?)\n```").FindAllStringSubmatch(string(doc), -1)
	if len(blocks) < 6 {
		t.Fatalf("%d snippets in docs/embedding.md", len(blocks))
	}
	for _, b := range blocks {
		src, err := os.ReadFile(b[1])
		if err != nil {
			t.Errorf("a snippet of %s: %v", b[1], err)
			continue
		}
		if !strings.Contains(string(src), b[2]) {
			t.Errorf("docs/embedding.md quotes %s, which no longer has:\n%s", b[1], b[2])
		}
	}
}
