package main

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWebResumeInBrowser runs examples/web/test/browser-resume.test.mjs: the page's turn
// stream breaks after its first speak event and the page resumes it. The server's log shows
// one resume, and no turn more than the page posted: the resume called no tool again.
func TestWebResumeInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("drives Chromium; skipped with -short")
	}
	browser := os.Getenv("CHROMIUM")
	if browser == "" {
		var err error
		if browser, err = exec.LookPath("chromium"); err != nil {
			t.Fatal("the browser tests need Chromium: install the Debian package chromium (test.sh does)")
		}
	}
	dir, node := webTestDir(t)
	base, _, logs := startServerLogs(t, nil, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "browser-resume.test.mjs", base, t.ArtifactDir())
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CHROMIUM="+browser)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	t.Logf("browser test:\n%s", out)
	if err != nil || !strings.Contains(string(out), "1/1 passed") {
		t.Fatalf("browser test: %v", err)
	}
	posted := regexp.MustCompile(`\((\d+) turns posted\)`).FindStringSubmatch(string(out))
	if posted == nil {
		t.Fatal("the test did not say how many turns the page posted")
	}
	want, _ := strconv.Atoi(posted[1])
	// The page's turns are logged once each when they end; the resume is logged apart.
	deadline := time.Now().Add(5 * time.Second)
	for {
		turns := strings.Count(logs.String(), "msg=turn ") + strings.Count(logs.String(), `"msg":"turn"`)
		resumed := strings.Count(logs.String(), "turn resumed")
		if turns == want && resumed == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server logged %d turns (the page posted %d) and %d resumes:\n%s", turns, want, resumed, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
