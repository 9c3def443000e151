package main

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/internal/testkit"
)

// TestWebResumeInBrowser runs examples/web/test/browser-resume.test.mjs: the page's turn
// stream breaks after its first speak event and the page resumes it. The server's log shows
// one resume, and no turn more than the page posted: the resume called no tool again.
func TestWebResumeInBrowser(t *testing.T) {
	needChromium(t)
	base, _, logs := startServerLogs(t, nil, nil)
	out := runBrowserFile(t, "browser-resume.test.mjs", false, 2*time.Minute, base)
	if !strings.Contains(out, "1/1 passed") {
		t.Fatal("the resume test did not pass")
	}
	posted := regexp.MustCompile(`\((\d+) turns posted\)`).FindStringSubmatch(out)
	if posted == nil {
		t.Fatal("the test did not say how many turns the page posted")
	}
	want, _ := strconv.Atoi(posted[1])
	// The page's turns are logged once each when they end; the resume is logged apart.
	if turns, resumed := waitForLog(logs, func(turns, resumed int) bool { return turns == want && resumed == 1 }); turns != want || resumed != 1 {
		t.Fatalf("the server logged %d turns (the page posted %d) and %d resumes:\n%s", turns, want, resumed, logs.String())
	}
}

// waitForLog waits up to 5 s for the turns and resumes the server logged to satisfy ok, and
// returns their counts.
func waitForLog(logs *lineWriter, ok func(turns, resumed int) bool) (turns, resumed int) {
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		log := logs.String()
		turns = strings.Count(log, "msg=turn ") + strings.Count(log, `"msg":"turn"`)
		resumed = strings.Count(log, "turn resumed")
		if ok(turns, resumed) || time.Now().After(deadline) {
			return turns, resumed
		}
	}
}

// TestWebResumeAcrossReplicas: the page's turn runs on replica A, its stream breaks after the
// first speak event, and the resume is served by replica B, both on one Redis and one bank:
// the bank's log shows the turn's tool called once.
func TestWebResumeAcrossReplicas(t *testing.T) {
	needChromium(t)
	redis := testkit.StartRedisT(t)
	var (
		mu    sync.Mutex
		calls = map[string]int{}
	)
	bank := demobank.New(nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls[r.Method+" "+r.URL.Path]++
		mu.Unlock()
		bank.ServeHTTP(w, r)
	}))
	defer srv.Close()
	path, env := replicas(t, srv.URL, redis.Addr)
	a, _, logsA := startServerLogs(t, []string{"-tenants", path, "-demo-web"}, env)
	// Behind a load balancer both replicas answer at one public URL, which the page's DPoP
	// proofs name: here, A's.
	b, _, logsB := startServerLogs(t, []string{"-tenants", path, "-demo-web", "-public-url", a}, env)

	if out := runBrowserFile(t, "browser-resume.test.mjs", false, 2*time.Minute, a, b); !strings.Contains(out, "1/1 passed") {
		t.Fatal("the resume test did not pass")
	}
	if !strings.Contains(logsB.String(), "turn resumed") || strings.Contains(logsA.String(), "turn resumed") {
		t.Error("the resume was not served by replica B")
	}
	mu.Lock()
	defer mu.Unlock()
	// The home turn asks for the balance and the goal, the question for the balance: a resume
	// that ran the turn again would ask a third time.
	if calls["GET /balance"] != 2 || calls["GET /goal"] != 1 {
		t.Errorf("the bank's log: %v", calls)
	}
}
