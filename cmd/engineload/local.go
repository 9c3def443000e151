package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/convengine/engine/examples/demobank"
)

// child is a -serve process of this program.
type child struct {
	kind  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	url   string
	// exited is closed once the process ended and was waited for.
	exited chan struct{}
}

// firstLine is an io.Writer that hands over the first line written to it and drops the rest.
type firstLine struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	done bool
	line chan string
}

func (f *firstLine) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return len(p), nil
	}
	f.buf.Write(p)
	if i := bytes.IndexByte(f.buf.Bytes(), '\n'); i >= 0 {
		f.done = true
		f.line <- strings.TrimSpace(string(f.buf.Bytes()[:i]))
	}
	return len(p), nil
}

// startChild starts exe -serve kind args… and waits for the URL it prints.
func startChild(ctx context.Context, exe, kind string, args []string, stderr io.Writer) (*child, error) {
	cmd := exec.Command(exe, append([]string{"-serve", kind}, args...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out := &firstLine{line: make(chan string, 1)}
	cmd.Stdout = out
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the %s server: %w", kind, err)
	}
	c := &child{kind: kind, cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(c.exited)
	}()
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case url := <-out.line:
		if !strings.HasPrefix(url, "http://") {
			c.stop()
			return nil, fmt.Errorf("the %s server printed %q instead of its URL", kind, url)
		}
		c.url = url
		return c, nil
	case <-c.exited:
		return nil, fmt.Errorf("the %s server exited: %v", kind, cmd.ProcessState)
	case <-timer.C:
	case <-ctx.Done():
	}
	c.stop()
	return nil, fmt.Errorf("the %s server did not start", kind)
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// stop ends the child: its standard input closes, which makes it shut down; a child that is
// still there after five seconds is killed. Either way it is waited for.
func (c *child) stop() {
	c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
		c.cmd.Process.Kill()
		<-c.exited
	}
}

// localTargets starts the servers of a -local run and returns the targets to drive, in the
// order of a round, and a function that stops every server.
func localTargets(ctx context.Context, cfg *config, stderr io.Writer) (targets []*target, stop func(), err error) {
	exe := cfg.exe
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, nil, fmt.Errorf("finding this program to start its servers: %w", err)
		}
	}
	var children []*child
	stop = func() {
		for i := len(children) - 1; i >= 0; i-- {
			children[i].stop()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	start := func(kind string, args ...string) (*child, error) {
		c, err := startChild(ctx, exe, kind, args, stderr)
		if err == nil {
			children = append(children, c)
		}
		return c, err
	}
	model := []string{
		"-deltas", strconv.Itoa(cfg.deltas), "-widgets", strconv.Itoa(cfg.widgets),
		"-tool-calls", strconv.Itoa(cfg.toolCalls),
		"-first-token", cfg.firstToken.String(), "-token-interval", cfg.tokenInterval.String(),
		"-sentences", strconv.Itoa(cfg.sentences), "-transcribe-delay", cfg.transcribeDelay.String(),
		"-synth-delay", cfg.synthDelay.String(), "-voice-text=" + strconv.FormatBool(cfg.voiceText),
		"-usage=" + strconv.FormatBool(cfg.usage), "-fallback=" + strconv.FormatBool(cfg.chain), "-recognizer", cfg.recognizer,
		"-recognizer-final", cfg.recognizerFinal.String(), "-recognizer-batch", cfg.recognizerBatch.String(),
		"-synthesizer", cfg.synthesizer, "-synth-first-byte", cfg.synthFirstByte.String(),
	}
	local := func(c *child, name, key string, offset time.Duration) *target {
		return &target{name: name, url: c.url, key: key, pid: c.pid(), stats: c.url + "/debug/stats", offset: offset}
	}
	switch cfg.mode {
	case "turn", "tts":
		backend := ""
		if cfg.toolCalls > 0 {
			b, err := start(serveBackend, "-backend-latency", cfg.backendLatency.String())
			if err != nil {
				return nil, stop, err
			}
			backend = b.url
		}
		eng, err := start(serveEngine, append(model, "-backend", backend)...)
		if err != nil {
			return nil, stop, err
		}
		if cfg.mode == "tts" {
			return []*target{local(eng, "engine", benchKey, 0)}, stop, nil
		}
		bare, err := start(serveBare, model...)
		if err != nil {
			return nil, stop, err
		}
		return []*target{local(bare, "bare", benchKey, cfg.firstToken), local(eng, "engine", benchKey, cfg.firstToken)}, stop, nil
	case "voice", "idle":
		eng, err := start(serveEngine, model...)
		if err != nil {
			return nil, stop, err
		}
		offset := time.Duration(0)
		if cfg.mode == "voice" {
			offset = voiceOffset(cfg)
		}
		return []*target{local(eng, "engine", benchKey, offset)}, stop, nil
	case "execute":
		bank, err := start(serveDemobank)
		if err != nil {
			return nil, stop, err
		}
		eng, err := start(serveDemo, "-backend", bank.url)
		if err != nil {
			return nil, stop, err
		}
		t := local(eng, "engine", demobank.EngineKey, 0)
		t.bank = bank.url
		return []*target{t}, stop, nil
	}
	return nil, stop, errors.New("-local: no local servers for mode " + cfg.mode)
}
