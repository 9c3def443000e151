package client_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/client"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/widgets"
)

// Example_enrolDevice enrols the app's gate key with the bank by one-time code (the bank's own
// API: the engine never relays enrolment), then sends money at a bank that verifies every
// transfer's proof against the devices it enrolled.
func Example_enrolDevice() {
	sms := make(chan string, 1) // the bank's one-time codes, as an SMS would bring them
	bank := httptest.NewServer(demobank.New(&demobank.Options{RequireDeviceProof: true,
		SendCode: func(_, code string) { sms <- code }}))
	defer bank.Close()
	tenant, _ := demobank.ProofTenant(bank.URL, "")
	tenants, _ := engine.NewStaticTenants(tenant)
	key := make([]byte, 32)
	rand.Read(key)
	eng, err := engine.New(engine.Config{Tenants: tenants, Model: intent.New(nil), Toolset: httptools.New(nil),
		SigningKey: key, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	srv := httptest.NewServer(eng.Handler())
	defer srv.Close()

	const userToken = "the end user's token for the bank"
	// The gate key: on a phone, a Secure Enclave or StrongBox key behind the biometric gate.
	gate, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	jwk, _ := client.PublicJWK(gate)
	bankCall := func(path string, body any) int {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, bank.URL+path, bytes.NewReader(raw))
		req.Header.Set("X-Token", userToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	bankCall("/devices/code", map[string]any{"public_key": jwk})
	fmt.Println("enrolled:", bankCall("/devices", map[string]any{"code": <-sms, "public_key": jwk}) == http.StatusCreated)

	c, err := client.New(srv.URL, &client.Options{EngineKey: demobank.ProofEngineKey, UserToken: client.StaticToken(userToken)})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.CreateSession(ctx, &client.SessionOptions{Bind: true, Gate: gate}); err != nil {
		log.Fatal(err)
	}
	stream, err := c.Turn(ctx, &client.TurnRequest{Transcript: "send 20 dollars to Alex"})
	if err != nil {
		log.Fatal(err)
	}
	spec, err := stream.Spec()
	stream.Close()
	if err != nil {
		log.Fatal(err)
	}
	confirm := spec.Widgets[0].(widgets.Confirm)
	fmt.Println(confirm.Body)
	// After Face ID passes, the client signs the proof with the gate key.
	res, err := c.Execute(ctx, confirm.Execute, client.Auth{Method: client.AuthFaceID, VerifiedAt: time.Now()}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Done.Title+":", res.Done.Line1)
	// Output:
	// enrolled: true
	// Send $20.00 to Alex?
	// Money sent: $20.00 to Alex
}
