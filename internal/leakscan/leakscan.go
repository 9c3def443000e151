// Package leakscan looks for the card numbers and IBANs a project's tests sent in what the
// tests left behind: the log lines, turn-log entries, trace exports and events that
// enginetest keeps in the directory its ArtifactsEnv names. The test command runs the scan
// once every test has run.
package leakscan

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/convengine/engine/pii"
)

// maxLine is the longest line read at once; a longer one is read in windows that overlap by
// more than the longest spoken card number.
const (
	maxLine = 1 << 20
	overlap = 4 << 10
)

// texts are the files read for values: sources, test data, scenarios, tapes and docs.
var texts = map[string]bool{".go": true, ".yaml": true, ".yml": true, ".json": true, ".jsonl": true, ".txt": true, ".md": true}

// detector finds cards and IBANs, typed or said in any language it reads.
func detector() *pii.Detector {
	d, err := pii.New(&pii.Options{Kinds: []pii.Kind{pii.Card, pii.IBAN}, MaxInput: maxLine})
	if err != nil {
		panic(err) // fixed options
	}
	return d
}

// Sent returns the card numbers and IBANs written anywhere in the source tree at root (test
// files, test data, scenarios, tapes, docs), normalised: every value a test could have sent,
// and some more, which makes the scan stricter, never laxer.
func Sent(root string) (map[string]bool, error) {
	d := detector()
	sent := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if name := e.Name(); name == ".git" || name == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !texts[filepath.Ext(path)] {
			return nil
		}
		return eachLine(path, func(_ int, line string) {
			for _, m := range d.Find(line) {
				sent[m.Value] = true
			}
		})
	})
	return sent, err
}

// A Leak is a value the tests sent, found in an artifact.
type Leak struct {
	File string // the artifact's name
	Line int
	Kind pii.Kind
	// Masked is the value as the scan reports it, masked: the report is a log of its own.
	Masked string
}

func (l Leak) String() string {
	return fmt.Sprintf("%s:%d: %s %s", l.File, l.Line, l.Kind, l.Masked)
}

// Counts says how many records of each kind of artifact (the prefix of a file's name before
// its first "-": log, turnlog, trace, events) the scan read.
type Counts map[string]int

// Scan reads every file of dir, line by line, and returns the values of sent it finds, and
// how many lines of each kind of artifact it read.
func Scan(dir string, sent map[string]bool) ([]Leak, Counts, error) {
	d := detector()
	var leaks []Leak
	counts := Counts{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		kind, _, _ := strings.Cut(e.Name(), "-")
		last := 0
		err := eachLine(filepath.Join(dir, e.Name()), func(n int, line string) {
			if n != last {
				counts[kind]++
				last = n
			}
			for _, m := range d.Find(line) {
				if sent[m.Value] {
					leaks = append(leaks, Leak{File: e.Name(), Line: n, Kind: m.Kind, Masked: d.Mask(m, 4)})
				}
			}
		})
		if err != nil {
			return nil, nil, err
		}
	}
	return leaks, counts, nil
}

// eachLine calls f with each line of the file at path, numbered from 1; a line longer than
// maxLine is given in overlapping windows under the same number.
func eachLine(path string, f func(n int, line string)) error {
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	r := bufio.NewReaderSize(file, 64<<10)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		line = bytes.TrimRight(line, "\r\n")
		for len(line) > maxLine {
			f(n, string(line[:maxLine]))
			line = line[maxLine-overlap:]
		}
		if len(line) > 0 {
			f(n, string(line))
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
