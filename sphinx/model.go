package sphinx

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/convengine/engine"
)

// model is one locale's models: acoustic model, language model and dictionary.
type model struct {
	name     string // the directory's name, such as "en-us"
	acoustic string // directory holding mdef
	lm       string
	dict     string

	once     sync.Once
	wordList []string // sorted words of the dictionary
	wordsErr error
}

// findModels lists the complete models under dir.
func findModels(dir string) ([]*model, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: reading %s: %w", ErrNoModel, dir, err)
	}
	var models []*model
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if m := readModel(filepath.Join(dir, e.Name())); m != nil {
			models = append(models, m)
		}
	}
	if len(models) == 0 {
		return nil, fmt.Errorf("%w: %s holds no complete model", ErrNoModel, dir)
	}
	return models, nil
}

// readModel returns the model in dir, or nil when a part is missing.
func readModel(dir string) *model {
	m := &model{name: strings.ToLower(filepath.Base(dir))}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch name := e.Name(); {
		case e.IsDir():
			if _, err := os.Stat(filepath.Join(path, "mdef")); err == nil && m.acoustic == "" {
				m.acoustic = path
			}
		case strings.HasSuffix(name, ".lm.bin") && !strings.Contains(name, "-phone") && m.lm == "":
			m.lm = path
		case strings.HasSuffix(name, ".dict") && m.dict == "":
			m.dict = path
		}
	}
	if m.acoustic == "" || m.lm == "" || m.dict == "" {
		return nil
	}
	return m
}

// model returns the model that serves locale: that of its tag, else of its language, else of
// another region of its language. "" is English.
func (s *Transcriber) model(locale string) (*model, error) {
	if locale == "" {
		locale = "en"
	}
	tag := strings.ToLower(locale)
	for _, t := range engine.LocaleFallbacks(tag) {
		for _, m := range s.models {
			if m.name == t {
				return m, nil
			}
		}
	}
	lang, _, _ := strings.Cut(tag, "-")
	for _, m := range s.models {
		if strings.HasPrefix(m.name, lang+"-") {
			return m, nil
		}
	}
	return nil, fmt.Errorf("%w: %w: %q (models: %s)", ErrNoModel, engine.ErrUnsupportedLocale,
		truncate(locale, 64), strings.Join(s.Locales(), ", "))
}

// words returns the words of the model's dictionary, sorted, reading it on first use.
func (m *model) words() ([]string, error) {
	m.once.Do(func() {
		// One string holds all the words, so that the list costs one header per word.
		var all strings.Builder
		var ends []int
		m.wordsErr = m.scanDictionary(func(word, _ []byte) {
			all.Write(word)
			ends = append(ends, all.Len())
		})
		if m.wordsErr != nil {
			return
		}
		s := all.String()
		list := make([]string, len(ends))
		start := 0
		for i, end := range ends {
			list[i] = s[start:end]
			start = end
		}
		slices.Sort(list)
		m.wordList = slices.Compact(list)
	})
	return m.wordList, m.wordsErr
}

// scanDictionary calls f with each entry of the model's dictionary: the word it is for and
// the whole line ("what" and "what(2) HH W AH T": another pronunciation of the word). Both are
// valid only during the call.
func (m *model) scanDictionary(f func(word, line []byte)) error {
	file, err := os.Open(m.dict)
	if err != nil {
		return fmt.Errorf("sphinx: reading the dictionary: %w", err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		line := sc.Bytes()
		word, _, _ := bytes.Cut(line, []byte(" "))
		if i := bytes.IndexByte(word, '('); i > 0 {
			word = word[:i]
		}
		if len(word) > 0 {
			f(word, line)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("sphinx: reading the dictionary: %w", err)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
