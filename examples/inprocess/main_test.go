package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
)

// TestInProcessTurnIsTheStream: the balance turn run in-process prints the events the turn
// stream of POST /engine sends for the same turn, line for line, the turn's own id aside.
func TestInProcessTurnIsTheStream(t *testing.T) {
	bank := httptest.NewServer(demobank.New(nil))
	defer bank.Close()
	eng, err := newEngine(bank.URL)
	if err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := run(t.Context(), eng, "What's my balance?", &out); err != nil {
		t.Fatal(err)
	}
	inProcess := strings.Split(strings.TrimSpace(out.String()), "\n")

	srv := httptest.NewServer(eng.Handler())
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/engine", strings.NewReader(`{"transcript":"What's my balance?"}`))
	req.Header.Set("X-Engine-Key", demobank.EngineKey)
	req.Header.Set("X-Token", "demo-user")
	req.Header.Set("X-Request-ID", "prod-inprocess-test")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var streamed []string
	var name string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			name = v
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			b, _ := json.Marshal(map[string]json.RawMessage{"event": json.RawMessage(`"` + name + `"`), "data": json.RawMessage(v)})
			streamed = append(streamed, string(b))
		}
	}

	// Both are normalised the same way: ids are new for each turn, and encoding/json orders
	// the two members of each line.
	ids := regexp.MustCompile(`"(conversationId|turnId)":"[^"]+"`)
	norm := func(lines []string) []string {
		var out []string
		for _, l := range lines {
			var v map[string]json.RawMessage
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("not a JSON line: %s", l)
			}
			b, _ := json.Marshal(v)
			out = append(out, ids.ReplaceAllString(string(b), `"$1":"…"`))
		}
		return out
	}
	got, want := norm(inProcess), norm(streamed)
	if len(got) != len(want) {
		t.Fatalf("in-process: %d events, stream: %d\n%s\n---\n%s", len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("event %d:\n in-process %s\n stream     %s", i+1, got[i], want[i])
		}
	}
	if !strings.HasPrefix(got[len(got)-1], `{"data":{"speak":"Your Everyday Checking balance is $1,234.56."`) || !strings.Contains(got[len(got)-1], `"event":"done"`) {
		t.Errorf("the last line is not the balance turn's done: %s", got[len(got)-1])
	}
}

// TestTheBanksOwnWidget: the card turn yields the bank's card widget, its number masked.
func TestTheBanksOwnWidget(t *testing.T) {
	bank := httptest.NewServer(demobank.New(nil))
	defer bank.Close()
	eng, err := newEngine(bank.URL)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(t.Context(), eng, "Show my card", &out); err != nil {
		t.Fatal(err)
	}
	want := `{"event":"widget","data":{"type":"card","expires":"08/29","network":"Visa","number":"•••• 4242","status":"active","title":"Everyday Debit"}}`
	if !strings.Contains(out.String(), want+"\n") {
		t.Errorf("no card widget event:\n%s", out.String())
	}
}

// failingModel is a model whose server cannot be reached, as with a wrong model URL.
type failingModel struct{}

func (failingModel) Stream(context.Context, *engine.ModelRequest) iter.Seq2[engine.ModelEvent, error] {
	return func(yield func(engine.ModelEvent, error) bool) {
		yield(engine.ModelEvent{}, errors.New("dial tcp: lookup models.invalid: no such host"))
	}
}

// TestAFailedTurnIsRunsError: with a model that cannot be reached, run writes the events a
// client sees, the error event and done among them, and returns the turn's failure as a
// *engine.TurnError.
func TestAFailedTurnIsRunsError(t *testing.T) {
	tenant, err := demobank.Tenant("http://127.0.0.1:1", "")
	if err != nil {
		t.Fatal(err)
	}
	tenants, err := engine.NewStaticTenants(tenant)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Config{Tenants: tenants, Model: failingModel{}, SigningKey: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = run(t.Context(), eng, "What's my balance?", &out)
	var failed *engine.TurnError
	if !errors.As(err, &failed) || failed.Code != engine.CodeModelError {
		t.Fatalf("run returned %T %v, want a *engine.TurnError model_error", err, err)
	}
	if !strings.Contains(out.String(), `{"event":"error","data":{"code":"model_error"`) || !strings.Contains(out.String(), `{"event":"done"`) {
		t.Errorf("the events written before the error:\n%s", out.String())
	}
}
