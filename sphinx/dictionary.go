package sphinx

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
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
			return strings.ContainsRune("|()[]*+\"", r) || r == ' ' || r == '\t' || r == '\n' || r == '\r'
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
	f, err := os.Open(m.dict)
	if err != nil {
		return nil, fmt.Errorf("sphinx: reading the dictionary: %w", err)
	}
	defer f.Close()
	var out bytes.Buffer
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		word, _, _ := bytes.Cut(line, []byte(" "))
		if i := bytes.IndexByte(word, '('); i > 0 {
			word = word[:i]
		}
		if _, found := slices.BinarySearch(words, string(word)); found && len(word) > 0 {
			out.Write(line)
			out.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sphinx: reading the dictionary: %w", err)
	}
	return out.Bytes(), nil
}

// runDictionary is a grammar's dictionary handed to one run of the program: an in-memory
// file the program opens as /dev/fd/4 where the system has them (Linux), else a temporary
// file removed after the run.
type runDictionary struct {
	path string   // what -dict names
	file *os.File // passed to the program as its descriptor 4, or nil
	temp bool     // path is a temporary file of this run
}

// dictionaryFD is the descriptor the program has the dictionary on: after standard input,
// output, error and the grammar's pipe (3).
const dictionaryFD = 4

func newRunDictionary(b []byte) (*runDictionary, error) {
	if f, err := memoryFile("sphinx-dictionary", b); err == nil {
		return &runDictionary{path: fmt.Sprintf("/dev/fd/%d", dictionaryFD), file: f}, nil
	}
	return tempDictionary(b)
}

// tempDictionary writes b to a temporary file, for systems without in-memory files.
func tempDictionary(b []byte) (*runDictionary, error) {
	f, err := os.CreateTemp("", "sphinx-dictionary-*.dict")
	if err != nil {
		return nil, fmt.Errorf("sphinx: writing the grammar's dictionary: %w", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("sphinx: writing the grammar's dictionary: %w", err)
	}
	return &runDictionary{path: f.Name(), temp: true}, nil
}

// close releases the dictionary once the program has ended.
func (d *runDictionary) close() {
	if d.file != nil {
		d.file.Close()
	}
	if d.temp {
		os.Remove(d.path)
	}
}
