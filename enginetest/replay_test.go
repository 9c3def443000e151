package enginetest_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"testing"

	"github.com/convengine/engine/enginetest"
)

// recorded returns the body, the status and the headers of a fixture file.
func recorded(t *testing.T, name string) ([]byte, int, http.Header) {
	t.Helper()
	raw, err := fs.ReadFile(enginetest.OpenAIFixtures(), name+".http")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	return body, resp.StatusCode, resp.Header
}

func post(t *testing.T, url, body string) (*http.Response, []byte, error) {
	t.Helper()
	resp, err := http.Post(url+"chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func TestReplayServerReplaysByteForByte(t *testing.T) {
	names, err := fs.Glob(enginetest.OpenAIFixtures(), "*.http")
	if err != nil || len(names) < 20 {
		t.Fatalf("fixtures %v, %v", names, err)
	}
	for _, file := range names {
		name := strings.TrimSuffix(file, ".http")
		t.Run(name, func(t *testing.T) {
			srv := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), func(*enginetest.ReplayRequest) string { return name })
			want, status, header := recorded(t, name)
			resp, got, err := post(t, srv.URL, `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
			cut := header.Get("X-Replay-Cut") == "true"
			if resp.StatusCode != status || !bytes.Equal(got, want) || (cut != errors.Is(err, io.ErrUnexpectedEOF)) {
				t.Fatalf("status %d (want %d), %d of %d bytes, error %v (cut: %v)", resp.StatusCode, status, len(got), len(want), err, cut)
			}
			if resp.Header.Get("Content-Type") == "" || resp.Header.Get("X-Replay-Cut") != "" {
				t.Errorf("headers %v", resp.Header)
			}
			if shape := strings.HasPrefix(name, "shape_"); !shape && resp.Header.Get("X-Request-Id") == "" {
				t.Errorf("headers %v", resp.Header)
			}
			if status == 200 && strings.HasPrefix(header.Get("Content-Type"), "text/event-stream") && !strings.HasPrefix(name, "shape_") {
				// OpenAI's own streams: one data line per event.
				for event := range strings.SplitSeq(strings.TrimSuffix(string(want), "\n\n"), "\n\n") {
					if !strings.HasPrefix(event, "data: ") || strings.Contains(event, "\n") {
						t.Errorf("not one data line: %q", event)
					}
				}
			}
		})
	}
}

func TestReplayServerRoutesAndRecords(t *testing.T) {
	srv := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), enginetest.DemoRoute)
	turn := `{"model":"m","stream":true,"messages":[{"role":"system","content":"s"},{"role":"user","content":"What's my balance?"}`
	for i, tc := range []struct {
		body, fixture string
	}{
		{turn + `]}`, "demo_balance_1"},
		{turn + `]}`, "demo_balance_1"},
		{turn + `,{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"get_balance","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"{}"}]}`, "demo_balance_2"},
		{`{"model":"m","stream":true,"messages":[{"role":"system","content":"s"}]}`, "demo_home_1"},
		{`{"model":"m","stream":true,"max_completion_tokens":1,"messages":[{"role":"user","content":"Hi"}]}`, "warm"},
		{`{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"send $20 to Alex"}]}]}`, "demo_transfer_1"},
		{`{"model":"m","messages":[{"role":"user","content":"tell me a joke"}]}`, "text"},
		{`{"model":"m","stream":true,"messages":[{"role":"user","content":"help me launder money through a transfer"}]}`, "refusal"},
	} {
		_, got, _ := post(t, srv.URL, tc.body)
		want, _, _ := recorded(t, tc.fixture)
		if !bytes.Equal(got, want) {
			t.Errorf("request %d: not the %s fixture:\n%s", i, tc.fixture, got)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 8 || reqs[0].Attempt != 0 || reqs[1].Attempt != 1 || reqs[2].Step != 1 || reqs[0].LastUser != "What's my balance?" ||
		reqs[3].LastUser != "" || reqs[0].Path != "/v1/chat/completions" || !reqs[0].Stream || reqs[6].Stream {
		t.Errorf("requests %+v", reqs)
	}

	none := enginetest.NewReplayServer(t, enginetest.OpenAIFixtures(), func(*enginetest.ReplayRequest) string { return "" })
	resp, body, _ := post(t, none.URL, `{}`)
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "no fixture") {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
}
