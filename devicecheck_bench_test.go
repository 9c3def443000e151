package engine_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
)

// BenchmarkCreateSessionDeviceCheck measures create-session of a session with a gate key on a
// tenant that requires proofs: "none" without a device check, "check" asking the reference bank
// (over loopback HTTP, as a tenant's backend is asked) whether the key is enrolled.
func BenchmarkCreateSessionDeviceCheck(b *testing.B) {
	for _, check := range []string{"none", "check"} {
		b.Run(check, func(b *testing.B) {
			codes := make(chan string, 1)
			bank := httptest.NewServer(demobank.New(&demobank.Options{RequireDeviceProof: true, SendCode: func(_, c string) { codes <- c }}))
			defer bank.Close()
			tn, err := demobank.ProofTenant(bank.URL, "")
			if err != nil {
				b.Fatal(err)
			}
			tn.Key = testTenant().Key
			tn.Limits.UserPerMinute, tn.Limits.UserBurst = 1e9, 1e9 // the figure is the work, not the limiter's refusal
			if check == "none" {
				tn.DeviceCheck = ""
			}
			tenants, _ := engine.NewStaticTenants(tn)
			e, err := engine.New(engine.Config{Tenants: tenants, Toolset: httptools.New(nil), SigningKey: testSigningKey,
				Model: modelFunc(nil), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
				Sessions: &engine.MemoryStore{MaxSessionsPerUser: -1}})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			device, gate := newDevice(b), newDevice(b)
			enrol := func(path, body string) {
				req, _ := http.NewRequest(http.MethodPost, bank.URL+path, strings.NewReader(body))
				req.Header.Set("X-Token", headers().Get("X-Token"))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
			enrol("/devices/code", `{"public_key":`+gate.jwkJSON()+`}`)
			enrol("/devices", `{"code":"`+<-codes+`","public_key":`+gate.jwkJSON()+`}`)
			body := `{"public_key":` + device.jwkJSON() + `,"gate_key":` + gate.jwkJSON() + `}`
			h := e.Handler()
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, engine.PathCreateSession, strings.NewReader(body))
				req.Header = headers()
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusCreated {
					b.Fatalf("%d %s", rec.Code, rec.Body.String())
				}
			}
		})
	}
}
