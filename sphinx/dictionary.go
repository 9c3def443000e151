package sphinx

import (
	"bytes"
	"slices"
	"strings"
	"unicode"
)

// A grammar's own dictionary: the program loads its whole pronunciation dictionary (134 723
// pronunciations of 125 945 words for US English) before it reads a sample, which was most of
// the 0.15 s a grammar run of a short phrase took. A grammar can only ever hear its own words,
// so its runs are given a dictionary of those words alone, with the model's pronunciations of
// them, and take 0.06 s.

// grammarWords returns the words a JSGF grammar can hear, sorted and without repeats: the
// tokens of its rules' expansions, without rule references, tags and weights.
func grammarWords(jsgf string) []string {
	var words []string
	for _, stmt := range strings.Split(stripComments(jsgf), ";") {
		stmt = strings.TrimSpace(stmt)
		_, expansion, isRule := strings.Cut(stmt, "=")
		if !isRule || !strings.HasPrefix(stmt, "<") && !strings.HasPrefix(stmt, "public") {
			continue // the header, the grammar's name, an import
		}
		expansion = cutBetween(expansion, '<', '>')
		expansion = cutBetween(expansion, '{', '}')
		expansion = cutBetween(expansion, '/', '/')
		words = append(words, strings.FieldsFunc(expansion, func(r rune) bool {
			return unicode.IsSpace(r) || strings.ContainsRune("|()[]*+\"", r)
		})...)
	}
	slices.Sort(words)
	return slices.Compact(words)
}

// stripComments removes JSGF's // and /* */ comments.
func stripComments(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		i := strings.IndexByte(s, '/')
		if i < 0 || i+1 >= len(s) {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		switch s[i+1] {
		case '/':
			_, rest, _ := strings.Cut(s[i:], "\n")
			s = rest
			b.WriteByte('\n')
		case '*':
			_, rest, _ := strings.Cut(s[i+2:], "*/")
			s = rest
			b.WriteByte(' ')
		default: // a weight's slash
			b.WriteByte('/')
			s = s[i+1:]
		}
	}
	return b.String()
}

// cutBetween removes every run of s from open to the next close, both included.
func cutBetween(s string, open, close byte) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, open)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteByte(' ')
		j := strings.IndexByte(s[i+1:], close)
		if j < 0 {
			return b.String()
		}
		s = s[i+1+j+1:]
	}
}

// pronunciations returns the lines of the model's dictionary for words, every pronunciation
// of each ("what" and "what(2)"), in the dictionary's order. A word the dictionary lacks has
// no line, and the program then refuses the grammar as it would with the whole dictionary.
func (m *model) pronunciations(words []string) ([]byte, error) {
	var out bytes.Buffer
	err := m.scanDictionary(func(word, line []byte) {
		if _, found := slices.BinarySearch(words, string(word)); found {
			out.Write(line)
			out.WriteByte('\n')
		}
	})
	return out.Bytes(), err
}
