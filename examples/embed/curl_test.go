package main

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestCommentCurl runs the curl of the package comment as a reader would, against the host's
// handler: only the address changes.
func TestCommentCurl(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		if testing.Short() {
			t.Skip("curl is not installed")
		}
		t.Fatal("the comment's command needs curl: install the Debian package curl")
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	// The command's lines are the comment's indented lines, from "curl" to the last "\".
	var cmd []string
	for _, line := range strings.Split(string(src), "\n") {
		line, ok := strings.CutPrefix(line, "//\t")
		if !ok {
			continue
		}
		if strings.HasPrefix(line, "curl ") || len(cmd) > 0 && strings.HasSuffix(cmd[len(cmd)-1], "\\") {
			cmd = append(cmd, line)
		}
	}
	if len(cmd) == 0 {
		t.Fatal("the package comment has no curl command")
	}
	h, eng, err := newHandler()
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	script := regexp.MustCompile(`(?:http://)?localhost:8090`).ReplaceAllString(strings.Join(cmd, "\n"), srv.URL)
	out, err := exec.Command("bash", "-c", "set -e\ncurl() { command curl --silent --show-error --fail-with-body \"$@\"; }\n"+script).CombinedOutput()
	if err != nil {
		t.Fatalf("%s\n%v:\n%s", script, err, out)
	}
	if !strings.Contains(string(out), `"speak":"Your order A-1042 is out for delivery."`) {
		t.Errorf("the turn did not answer:\n%s", out)
	}
}
