package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestAGUIClient runs examples/web/test/agui.test.mjs against the reference server: the
// official AG-UI client (@ag-ui/client's HttpAgent) runs a balance turn, a transfer that ends
// as an interrupt, its resume with basic auth (the money moves once, and a replayed resume
// moves nothing), a cancelled interrupt and a forged one, at POST /engine/agui.
func TestAGUIClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Node.js")
	}
	dir, node := webTestDir(t)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@ag-ui", "client")); err != nil {
		t.Fatalf("the @ag-ui/client package is not installed: run npm ci in %s (test.sh does)", dir)
	}
	base, _ := startServer(t, nil, nil)
	cmd := exec.CommandContext(t.Context(), node, "--test", "agui.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ENGINE_URL="+base)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	t.Logf("node --test agui.test.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("node --test agui.test.mjs: %v", err)
	}
}
