package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestEventSourceResumesATurn runs examples/web/test/eventsource.test.mjs: a standard
// EventSource (the eventsource package for Node.js) resumes a turn cut after its first speak
// event, reconnects by itself with its Last-Event-ID when that stream is cut too, and stops when
// the engine answers 204 after done. The server's log shows one turn: no resume ran it again.
func TestEventSourceResumesATurn(t *testing.T) {
	dir, node := webTestDir(t)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "eventsource")); err != nil {
		t.Fatalf("the eventsource package is not installed: run npm ci in %s (test.sh does)", dir)
	}
	base, _, logs := startServerLogs(t, nil, nil)
	cmd := exec.CommandContext(t.Context(), node, "--test", "eventsource.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ENGINE_URL="+base)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	t.Logf("node --test eventsource.test.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("node --test eventsource.test.mjs: %v", err)
	}
	if turns, _ := waitForLog(logs, func(turns, _ int) bool { return turns == 1 }); turns != 1 {
		t.Fatalf("the server logged %d turns, want the one posted:\n%s", turns, logs.String())
	}
}
