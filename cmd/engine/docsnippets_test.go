package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// docBlock is a fenced block of a Markdown file.
type docBlock struct {
	file string
	line int    // of the opening fence
	lang string // the fence's first word
	info string // the rest of the fence's line
	body string // without the fence's indentation
	// quotes is the file that a "<!-- snippet: FILE -->" line before the block says it quotes.
	quotes string
}

func (b docBlock) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

var (
	fence      = regexp.MustCompile("^( *)```([^` ]*) *(.*)$")
	snippetTag = regexp.MustCompile(`^<!-- snippet: (\S+) -->$`)
)

// docBlocks reads the fenced blocks of README.md and docs/*.md, in that order.
func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	files, _ := filepath.Glob("../../docs/*.md")
	files = append([]string{"../../README.md"}, files...)
	var blocks []docBlock
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel("../..", f)
		var open *docBlock
		var indent, prev string
		for i, line := range strings.Split(string(src), "\n") {
			if open != nil {
				if strings.TrimSpace(line) == "```" {
					blocks = append(blocks, *open)
					open = nil
					continue
				}
				open.body += strings.TrimPrefix(line, indent) + "\n"
				continue
			}
			if m := fence.FindStringSubmatch(line); m != nil {
				open = &docBlock{file: name, line: i + 1, lang: m[2], info: m[3]}
				indent = m[1]
				if q := snippetTag.FindStringSubmatch(prev); q != nil {
					open.quotes = q[1]
				}
			}
			if strings.TrimSpace(line) != "" {
				prev = line
			}
		}
		if open != nil {
			t.Fatalf("%s: the block is never closed", open)
		}
	}
	return blocks
}

// need fails the test, or skips it under -short, without the program, naming its Debian
// package.
func need(t *testing.T, program, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(program); err != nil {
		if testing.Short() {
			t.Skipf("%s is not installed (Debian package %s)", program, pkg)
		}
		t.Fatalf("the docs' commands need %s: install the Debian package %s", program, pkg)
	}
}

// curlCommand finds a curl run by a shell line, as a command or in $(…).
var curlCommand = regexp.MustCompile(`(?m)(?:^|\$\()\s*curl\s`)

// TestDocCommands runs every shell block of README.md and docs/*.md that calls curl, as the
// docs have it, in order, against one reference server with the offline demo: only the address
// changes (127.0.0.1:8080 or localhost:8080 to the server's, 127.0.0.1:6060 to its debug
// address). A curl that is not answered 2xx fails its block. A block that reads the one-time code
// the server prints on its console ("read … CODE") is given it on its standard input, as the
// reader types it.
func TestDocCommands(t *testing.T) {
	need(t, "bash", "bash")
	need(t, "curl", "curl")
	need(t, "jq", "jq")
	var blocks []docBlock
	for _, b := range docBlocks(t) {
		if (b.lang == "sh" || b.lang == "bash") && curlCommand.MatchString(b.body) {
			blocks = append(blocks, b)
		}
	}
	if len(blocks) < 5 {
		t.Fatalf("%d blocks with curl commands in the docs", len(blocks))
	}
	base, out, _ := startServerLogs(t, []string{"-debug-addr", "127.0.0.1:0"}, nil)
	m := regexp.MustCompile(`Debug figures and profiles \(private\): (http://[^/\s]+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("the banner names no debug address:\n%s", out.String())
	}
	debug := m[1]
	address := strings.NewReplacer("http://127.0.0.1:8080", base, "http://localhost:8080", base, "http://127.0.0.1:6060", debug)
	dir := t.TempDir()
	commands := 0
	for _, b := range blocks {
		if strings.Contains(b.body, "/engine/tts") {
			if _, err := exec.LookPath("flite"); err != nil {
				need(t, "espeak-ng", "flite or espeak-ng")
			}
		}
		commands += len(curlCommand.FindAllString(b.body, -1))
		script := "set -eu -o pipefail\ncurl() { command curl --show-error --fail-with-body \"$@\"; }\n" + address.Replace(b.body)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, "bash", "-c", script)
		cmd.Dir = dir
		if strings.Contains(b.body, "read ") {
			cmd.Stdin = &consoleCodes{out: out, from: len(out.String())}
		}
		got, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("%s does not run as written (%v):\n%s\n--- output:\n%s", b, err, b.body, got)
		}
	}
	t.Logf("%d curl commands in %d blocks", commands, len(blocks))
}

// consoleCodes reads as the reader who types the one-time code the demo bank printed on the
// server's console after from.
type consoleCodes struct {
	out  *lineWriter
	from int
	sent bool
}

var printedCode = regexp.MustCompile(`demo bank: one-time code for [^:\n]+: (\d{6})`)

func (c *consoleCodes) Read(p []byte) (int, error) {
	if c.sent {
		return 0, io.EOF
	}
	for wait := time.Now().Add(5 * time.Second); time.Now().Before(wait); time.Sleep(10 * time.Millisecond) {
		if m := printedCode.FindStringSubmatch(c.out.String()[c.from:]); m != nil {
			c.sent = true
			return copy(p, m[1]+"\n"), nil
		}
	}
	return 0, io.EOF
}

// TestDocGoSnippets: every Go block of README.md and docs/*.md is code that compiles. A whole
// file (package …) is built; a block after "<!-- snippet: FILE -->" is found, as it is, in
// FILE, which the suite builds; a block whose fence says "go fragment" is a piece of a program
// and is left out, and they are few.
func TestDocGoSnippets(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var whole, quoted, fragments []docBlock
	for _, b := range docBlocks(t) {
		switch {
		case b.lang != "go":
		case b.info == "fragment":
			fragments = append(fragments, b)
		case b.quotes != "":
			quoted = append(quoted, b)
		case strings.HasPrefix(b.body, "package "):
			whole = append(whole, b)
		default:
			t.Errorf("%s: a Go block that is neither a whole file, nor a quote (<!-- snippet: FILE -->), nor marked ```go fragment", b)
		}
	}
	for _, b := range quoted {
		src, err := os.ReadFile(filepath.Join(root, b.quotes))
		if err != nil {
			t.Errorf("%s: %v", b, err)
			continue
		}
		if !strings.Contains(string(src), strings.TrimSuffix(b.body, "\n")) {
			t.Errorf("%s quotes %s, which no longer has:\n%s", b, b.quotes, b.body)
		}
	}
	if len(fragments) > 9 {
		t.Errorf("%d Go fragments in the docs: make whole programs or quotes of them", len(fragments))
	}
	// The whole files are built as packages of the module that exist only in an overlay.
	overlay := map[string]string{}
	var pkgs, srcs []string
	tmp := t.TempDir()
	for i, b := range whole {
		src := filepath.Join(tmp, fmt.Sprintf("snippet%d.go", i))
		if err := os.WriteFile(src, []byte(b.body), 0o644); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(root, "cmd", "engine", "testdata", fmt.Sprintf("docsnippet%d", i))
		overlay[filepath.Join(dir, "main.go")] = src
		pkgs, srcs = append(pkgs, dir), append(srcs, src)
	}
	if len(whole) < 2 {
		t.Fatalf("%d whole Go files in the docs", len(whole))
	}
	raw, _ := json.Marshal(map[string]any{"Replace": overlay})
	overlayFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlayFile, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	// One build for all: the packages compile once, in parallel.
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), append([]string{"build", "-overlay", overlayFile, "-o", os.DevNull}, pkgs...)...)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := out.String()
		for i, b := range whole {
			msg = regexp.MustCompile(regexp.QuoteMeta(srcs[i])+`:(\d+)`).ReplaceAllStringFunc(msg, func(at string) string {
				n, _ := strconv.Atoi(at[len(srcs[i])+1:])
				return fmt.Sprintf("%s:%d", b.file, b.line+n)
			})
			msg = strings.ReplaceAll(msg, pkgs[i], b.String())
		}
		t.Errorf("the docs' Go files do not build (%v):\n%s", err, msg)
	}
	t.Logf("%d whole files built, %d quotes found, %d fragments left out", len(whole), len(quoted), len(fragments))
}
