package main

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"
)

// The debug address serves the process's figures and profiles; the engine's address does not.
func TestDebugAddress(t *testing.T) {
	base, out := startServer(t, []string{"-debug-addr", "127.0.0.1:0", "-speech", "off"}, nil)
	m := regexp.MustCompile(`Debug figures and profiles \(private\): (\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("the banner names no debug address:\n%s", out.String())
	}
	turn(t, base, "prod-debug-1", `{"transcript":"what is my balance"}`)
	resp, err := http.Get(m[1] + "?gc=1")
	if err != nil {
		t.Fatal(err)
	}
	var stats struct {
		Goroutines uint64 `json:"goroutines"`
		HeapLive   uint64 `json:"heap_live_bytes"`
	}
	err = json.NewDecoder(resp.Body).Decode(&stats)
	resp.Body.Close()
	if err != nil || stats.Goroutines == 0 || stats.HeapLive == 0 {
		t.Fatalf("debug stats: %+v, %v", stats, err)
	}
	resp, err = http.Get(base + "/debug/stats")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("the engine's own address answers /debug/stats with %s", resp.Status)
	}
}

// The banner names the demo banks, whose ledger a soak checks.
func TestBannerNamesTheDemoBanks(t *testing.T) {
	_, out := startServer(t, []string{"-speech", "off"}, nil)
	m := regexp.MustCompile(`production (http://\S+)\s+staging (http://\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("the banner names no bank:\n%s", out.String())
	}
	req, _ := http.NewRequest(http.MethodGet, m[1]+"/balance", nil)
	req.Header.Set("X-Token", "banner-user")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the production bank answers %s", resp.Status)
	}
}

func TestBoundFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		bad  bool
	}{
		{args: []string{"-max-syntheses", "8", "-max-sockets", "100", "-max-user-sockets", "2", "-audio-memory", "16", "-write-timeout", "3s",
			"-max-user-syntheses", "3", "-max-transcriptions", "5", "-max-user-transcriptions", "1"}},
		{env: map[string]string{"ENGINE_MAX_SYNTHESES": "8", "ENGINE_MAX_SOCKETS": "100", "ENGINE_MAX_USER_SOCKETS": "2", "ENGINE_AUDIO_MEMORY": "16", "ENGINE_WRITE_TIMEOUT": "3s",
			"ENGINE_MAX_USER_SYNTHESES": "3", "ENGINE_MAX_TRANSCRIPTIONS": "5", "ENGINE_MAX_USER_TRANSCRIPTIONS": "1"}},
		{env: map[string]string{"ENGINE_MAX_SOCKETS": "lots"}, bad: true},
		{env: map[string]string{"ENGINE_WRITE_TIMEOUT": "3"}, bad: true},
		{args: []string{"-write-timeout", "-1s"}, bad: true},
	} {
		o, err := parseFlags(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		if (err != nil) != tc.bad {
			t.Errorf("%v %v: err %v", tc.args, tc.env, err)
			continue
		}
		if !tc.bad && (o.maxSyntheses != 8 || o.maxSockets != 100 || o.maxUserSockets != 2 || o.audioMemoryMiB != 16 || o.writeTimeout != 3*time.Second ||
			o.maxUserSyntheses != 3 || o.maxTranscriptions != 5 || o.maxUserTranscriptions != 1) {
			t.Errorf("%v %v: %+v", tc.args, tc.env, o)
		}
	}
}

func TestMaxTurnsFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want int
		bad  bool
	}{
		{want: 0},
		{args: []string{"-max-turns", "4096"}, want: 4096},
		{env: map[string]string{"ENGINE_MAX_TURNS": "-1"}, want: -1},
		{env: map[string]string{"ENGINE_MAX_TURNS": "many"}, bad: true},
	} {
		o, err := parseFlags(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		if (err != nil) != tc.bad || (!tc.bad && o.maxTurns != tc.want) {
			t.Errorf("%v %v: maxTurns %d, err %v", tc.args, tc.env, o.maxTurns, err)
		}
	}
}
