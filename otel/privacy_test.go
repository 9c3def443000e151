package otel_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/convengine/engine"
	"github.com/convengine/engine/agui"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/otel"
	"github.com/convengine/engine/pii"
)

// TestIdsAreMaskedInSpans: the ids a client chooses (X-Request-ID, context.sessionId, AG-UI's
// threadId and runId) reach the spans masked as the engine's log masks them: card numbers and
// IBANs always, and the kinds the tenant's policy masks in its log lines.
func TestIdsAreMaskedInSpans(t *testing.T) {
	privacy, err := pii.NewPrivacy(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts otel.Options
		// secrets are the values no attribute may hold; masked the attributes' masked values.
		secrets []string
		masked  map[string]string
		agui    bool
		reqID   string
		body    string
	}{
		{name: "stream", opts: otel.Options{Mask: privacy.TraceMasker(nil)}, reqID: "prod-4111111111111111",
			body:    `{"transcript":"what is my balance","context":{"sessionId":"conv-5555555555554444"}}`,
			secrets: []string{"4111111111111111", "5555555555554444"},
			masked:  map[string]string{"engine.request_id": "prod-•••• 1111", "gen_ai.conversation.id": "conv-•••• 4444"}},
		{name: "tenant kind", opts: otel.Options{Mask: privacy.TraceMasker(nil)}, reqID: "prod-ACC123456",
			body:    `{"transcript":"what is my balance","context":{"sessionId":"GB82WEST12345698765432"}}`,
			secrets: []string{"ACC123456", "WEST1234"},
			masked:  map[string]string{"engine.request_id": "prod-•••• 3456", "gen_ai.conversation.id": "GB•• •••• … 5432"}},
		{name: "no mask set", reqID: "prod-4111111111111111",
			body:    `{"transcript":"what is my balance","context":{"sessionId":"conv-GB82WEST12345698765432"}}`,
			secrets: []string{"4111111111111111", "WEST1234"},
			masked:  map[string]string{"engine.request_id": "prod-•••• 1111", "gen_ai.conversation.id": "conv-GB•• •••• … 5432"}},
		{name: "agui", opts: otel.Options{Mask: privacy.TraceMasker(nil)}, agui: true, reqID: "prod-4012888888881881",
			body: fmt.Sprintf(`{"threadId":%q,"runId":%q,"messages":[{"id":"u1","role":"user","content":"what is my balance"}],"tools":[],"context":[],"state":{}}`,
				"thread-5555555555554444", "run-4111111111111111"),
			secrets: []string{"4012888888881881", "5555555555554444", "4111111111111111"},
			masked:  map[string]string{"engine.request_id": "prod-•••• 1881", "gen_ai.conversation.id": "thread-•••• 4444"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &enginetest.Logs{}
			log := slog.New(privacy.LogHandler(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}), nil))
			spans := tracetest.NewSpanRecorder()
			tc.opts.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
			tc.opts.MeterProvider = metricnoop.NewMeterProvider()
			obs, err := otel.New(&tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			d := enginetest.NewDemo(t, &enginetest.DemoOptions{
				Config: engine.Config{Privacy: privacy, Logger: log, Observer: obs.Observer()},
				Tenant: func(tn *engine.Tenant) { // the bank's account numbers are masked in its log lines
					tn.Privacy = json.RawMessage(`{"preset":"banking","kinds":{"account":{"logs":"mask"}},
						"patterns":[{"kind":"account","name":"member","regexp":"ACC[0-9]{6}"}]}`)
				}})
			t.Cleanup(func() { keepSpans(spans) })
			url := d.URL + "/engine"
			if tc.agui {
				srv := httptest.NewServer(agui.Handler(d.Engine, nil))
				t.Cleanup(srv.Close)
				url = srv.URL
			}
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(tc.body))
			req.Header = http.Header{"Content-Type": {"application/json"}, "X-Engine-Key": {demobank.EngineKey},
				"X-Token": {userToken}, "X-Request-Id": {tc.reqID}}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%d %s", resp.StatusCode, b)
			}
			var turn sdktrace.ReadOnlySpan
			for _, s := range spans.Ended() {
				if s.Name() == "invoke_agent "+demobank.EngineKey {
					turn = s
				}
				for _, kv := range s.Attributes() {
					for _, secret := range tc.secrets {
						if v := strings.ReplaceAll(kv.Value.Emit(), " ", ""); strings.Contains(v, secret) {
							t.Errorf("span %s: %s = %q holds %s", s.Name(), kv.Key, kv.Value.Emit(), secret)
						}
					}
				}
			}
			if turn == nil {
				t.Fatal("no turn span")
			}
			got := attrsOf(turn)
			for k, want := range tc.masked {
				if got[k].AsString() != want {
					t.Errorf("%s = %q, want %q", k, got[k].AsString(), want)
				}
			}
			if !strings.Contains(logs.String(), tc.masked["engine.request_id"]) {
				t.Errorf("the log does not show the request id as %q", tc.masked["engine.request_id"])
			}
		})
	}
}
