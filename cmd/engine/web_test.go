package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
)

// webTestDir returns examples/web/test and the node program, or fails naming the Debian package.
func webTestDir(t *testing.T) (dir, node string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("the web client's tests need Node.js: install the Debian packages nodejs and npm")
	}
	dir, err = filepath.Abs("../../examples/web/test")
	if err != nil {
		t.Fatal(err)
	}
	return dir, node
}

// TestWebClientModules runs the tests of the client's modules that need no browser: its SSE
// parser, WAV encoder and resampler (examples/web/test/modules.test.mjs).
func TestWebClientModules(t *testing.T) {
	dir, node := webTestDir(t)
	cmd := exec.CommandContext(t.Context(), node, "--test", "modules.test.mjs")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test modules.test.mjs: %v\n%s", err, out)
	}
}

// runBrowserFile runs a browser test file of examples/web/test in Chromium (node file base
// artifacts args…), logs its output and returns it; the test fails unless the file passed.
// speech says that the file's page speaks and listens: espeak-ng, flite (whose kal16 says the
// spoken questions) and pocketsphinx must be installed.
func runBrowserFile(t *testing.T, file string, speech bool, timeout time.Duration, base string, args ...string) string {
	t.Helper()
	browser := needChromium(t)
	if speech {
		for _, need := range []struct{ program, packages string }{
			{"espeak-ng", "espeak-ng"},
			{"flite", "flite"},
			{"pocketsphinx_continuous", "pocketsphinx and pocketsphinx-en-us"},
		} {
			if _, err := exec.LookPath(need.program); err != nil {
				t.Fatalf("the browser tests need %s: install the Debian packages %s", need.program, need.packages)
			}
		}
	}
	dir, node := webTestDir(t)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core")); err != nil {
		t.Fatalf("playwright-core is not installed: run npm ci in %s (test.sh does)", dir)
	}
	shots := t.ArtifactDir()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{file, base, shots}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CHROMIUM="+browser)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	t.Logf("%s (screenshots in %s):\n%s", file, shots, out)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if !strings.Contains(string(out), "passed") {
		t.Fatalf("%s printed no summary", file)
	}
	return string(out)
}

// TestWebClientInBrowser runs the reference web client's browser tests
// (examples/web/test/browser.test.mjs) in Chromium against the offline demo. The proof
// tenant's tests read the demo bank's one-time codes on the server's console, which this test
// serves to them. The screenshots go to the test's artifact folder: keep them with
// go test -artifacts.
func TestWebClientInBrowser(t *testing.T) {
	needChromium(t)
	base, out := startServer(t, nil, nil)
	console := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, out.String())
	}))
	defer console.Close()
	runBrowserFile(t, "browser.test.mjs", true, 5*time.Minute, base, console.URL)
}

// TestWebVoiceSocketInBrowser runs the web client's live voice tests
// (examples/web/test/browser-voice.test.mjs) in Chromium against the offline demo: the page
// streams its fake microphone over the voice socket, opened with a stream ticket, finds the end
// of speech itself, plays the answer as it arrives and stops it when the question, looped, is
// heard again (barge-in). The screenshots go to the test's artifact folder.
func TestWebVoiceSocketInBrowser(t *testing.T) {
	needChromium(t)
	base, _ := startServer(t, nil, nil)
	out := runBrowserFile(t, "browser-voice.test.mjs", true, 3*time.Minute, base)
	if !strings.Contains(out, "time to first audio: ") {
		t.Error("the live voice browser tests did not report the time to first audio")
	}
}

// TestDemoWebRoutes checks that the client is served at /demo/ by default with the offline
// demo, and that -demo-web=false turns it off.
func TestDemoWebRoutes(t *testing.T) {
	get := func(t *testing.T, url string) *http.Response {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	t.Run("on", func(t *testing.T) {
		base, out := startServer(t, nil, nil)
		for _, path := range []string{"/demo/", "/demo/app.js", "/demo/style.css"} {
			resp := get(t, base+path)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") == "" {
				t.Errorf("GET %s: %d, CSP %q", path, resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
			}
		}
		if !strings.Contains(out.String(), base+"/demo/") {
			t.Errorf("the banner does not name the web client:\n%s", out.String())
		}
		// Passkeys need a domain: the page asked at a loopback address goes to localhost, path
		// and query kept; the API stays where it is.
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		port := base[strings.LastIndex(base, ":")+1:]
		for _, tc := range []struct{ host, path, want string }{
			{"127.0.0.1:" + port, "/demo/?key=pk_demo_proof&gate=passkey", "http://localhost:" + port + "/demo/?key=pk_demo_proof&gate=passkey"},
			{"[::1]:" + port, "/demo/app.js", "http://localhost:" + port + "/demo/app.js"},
			{"127.0.0.1", "/demo/", "http://localhost/demo/"},
			{"localhost:" + port, "/demo/", ""},
			{"127.0.0.1:" + port, "/healthz", ""},
		} {
			req, _ := http.NewRequest(http.MethodGet, base+tc.path, nil)
			req.Host = tc.host
			resp, err := noFollow.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if loc := resp.Header.Get("Location"); loc != tc.want || (tc.want != "") != (resp.StatusCode == http.StatusTemporaryRedirect) {
				t.Errorf("GET %s at %s: %d, Location %q, want %q", tc.path, tc.host, resp.StatusCode, loc, tc.want)
			}
		}
	})
	tenant, err := demobank.Tenant("http://placeholder.invalid", "")
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(map[string]any{"tenants": []*engine.Tenant{tenant}})
	if err != nil {
		t.Fatal(err)
	}
	tenants := filepath.Join(t.TempDir(), "tenants.json")
	if err := os.WriteFile(tenants, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		env    map[string]string
		status int
	}{
		{"flag off", []string{"-demo-web=false"}, nil, http.StatusNotFound},
		{"env off", nil, map[string]string{"ENGINE_DEMO_WEB": "false"}, http.StatusNotFound},
		{"tenants file", []string{"-tenants", tenants}, nil, http.StatusNotFound},
		{"tenants file, flag on", []string{"-tenants", tenants, "-demo-web"}, nil, http.StatusOK},
		{"tenants file, env on", []string{"-tenants", tenants}, map[string]string{"ENGINE_DEMO_WEB": "1"}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, _ := startServer(t, tc.args, tc.env)
			if resp := get(t, base+"/demo/"); resp.StatusCode != tc.status {
				t.Errorf("GET /demo/: %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
	t.Run("bad env", func(t *testing.T) {
		err := run(t.Context(), nil, func(k string) string { return map[string]string{"ENGINE_DEMO_WEB": "maybe"}[k] }, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "ENGINE_DEMO_WEB") {
			t.Errorf("run: %v", err)
		}
	})
}

// TestHandoffInBrowser runs the handoff's browser test (examples/web/test/browser-handoff.test.mjs)
// in Chromium against the offline demo: the customer on /demo/ asks for a person, the person
// on the desk at /demo/desk/ (with the desk key this server printed) answers and gives the
// conversation back. It logs the delay from the person's send to the customer's page.
func TestHandoffInBrowser(t *testing.T) {
	needChromium(t)
	base, out := startServer(t, nil, nil)
	m := regexp.MustCompile(`desk key: (desk_[0-9a-f]+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("the server printed no desk key:\n%s", out.String())
	}
	got := runBrowserFile(t, "browser-handoff.test.mjs", false, 2*time.Minute, base, m[1])
	if !strings.Contains(got, "send to shown on the customer's page: ") {
		t.Error("the handoff's browser test did not report the delay")
	}
}
