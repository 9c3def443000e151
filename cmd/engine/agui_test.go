package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestAGUIClient runs examples/web/test/agui.test.mjs against the reference server: the
// official AG-UI client (@ag-ui/client's HttpAgent) runs a balance turn, a transfer that ends
// as an interrupt, its resume with basic auth (the money moves once, and a replayed resume is
// RUN_ERROR action_replayed), a cancelled interrupt and a forged one, at POST /engine/agui; and
// on pk_demo_proof, a device it enrols at the demo bank proves the transfer (forged, tampered,
// missing proofs and a replay are RUN_ERROR, the money moves once). The bank's one-time codes
// reach the node test from the server's console through CODES_URL. A run that asks for a person
// stays open while the handoff does and carries the person's messages, which the desk (its key
// in DESK_KEY) writes, as text messages the client keeps.
func TestAGUIClient(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Node.js")
	}
	dir, node := webTestDir(t)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@ag-ui", "client")); err != nil {
		t.Fatalf("the @ag-ui/client package is not installed: run npm ci in %s (test.sh does)", dir)
	}
	base, out := startServer(t, nil, nil)
	codes := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code, ok := consoleCode(r, out, r.URL.Query().Get("user")); ok {
			w.Write([]byte(code))
			return
		}
		http.Error(w, "no code for that user", http.StatusNotFound)
	}))
	defer codes.Close()
	cmd := exec.CommandContext(t.Context(), node, "--test", "agui.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ENGINE_URL="+base, "CODES_URL="+codes.URL, "DESK_KEY="+deskKeyOf(t, out))
	cmd.WaitDelay = 10 * time.Second
	output, err := cmd.CombinedOutput()
	t.Logf("node --test agui.test.mjs:\n%s", output)
	if err != nil {
		t.Fatalf("node --test agui.test.mjs: %v", err)
	}
	if !strings.Contains(string(output), "# skipped 0") {
		t.Error("a test of agui.test.mjs was skipped")
	}
}

// consoleCode waits a few seconds for the newest one-time code the demo bank printed for user
// on the server's console.
func consoleCode(r *http.Request, console *lineWriter, user string) (string, bool) {
	if user == "" {
		return "", false
	}
	re := regexp.MustCompile(`demo bank: one-time code for ` + regexp.QuoteMeta(user) + `: (\d{6})`)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && r.Context().Err() == nil; time.Sleep(20 * time.Millisecond) {
		if m := re.FindAllStringSubmatch(console.String(), -1); m != nil {
			return m[len(m)-1][1], true
		}
	}
	return "", false
}
