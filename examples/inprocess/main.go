// Command inprocess runs a turn of the demo tenant in-process, without HTTP: the host calls
// Engine.Turn with the user's token and the transcript and gets the turn's events as Go
// values, the same events, in the same order and with the same data as the turn stream of
// POST /engine. It prints each as one JSON line, as a host relaying turns over its own
// transport (gRPC, a queue, its own WebSocket) would send them, ending with done.
//
//	go run ./examples/inprocess
//	go run ./examples/inprocess "Show my recent transactions"
//	go run ./examples/inprocess "Show my card"    # the bank's own card widget
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/intent"
)

// newEngine serves the demo tenant against the bank at bankURL, with the offline intent model.
func newEngine(bankURL string) (*engine.Engine, error) {
	tenant, err := demobank.Tenant(bankURL, "")
	if err != nil {
		return nil, err
	}
	tenants, err := engine.NewStaticTenants(tenant)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	rand.Read(key) // a real host reads a key shared by its replicas from its secret store
	return engine.New(engine.Config{Tenants: tenants, Model: intent.New(nil), Toolset: httptools.New(nil), SigningKey: key,
		Widgets: []engine.WidgetType{demobank.CardWidget}}) // the bank's own card widget
}

// run asks eng the transcript as the demo user and writes each event of the turn to w as a
// line of JSON.
func run(ctx context.Context, eng *engine.Engine, transcript string, w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // the data as the stream has it
	caller := &engine.Caller{
		EngineKey: demobank.EngineKey,
		UserToken: "demo-user", // the host's user, already authenticated by the host
	}
	for ev, err := range eng.Turn(ctx, caller, &engine.TurnInput{Transcript: transcript}) {
		if err != nil {
			// A *engine.Problem: the turn did not start. A *engine.TurnError, last: it failed,
			// after its error event, the apology and done were written.
			return err
		}
		if err := enc.Encode(ev); err != nil {
			return err // leaving the loop stops the turn
		}
	}
	return nil
}

func main() {
	bank := httptest.NewServer(demobank.New(nil)) // stands in for the tenant's backend
	defer bank.Close()
	eng, err := newEngine(bank.URL)
	if err != nil {
		log.Fatal(err)
	}
	transcript := "What's my balance?"
	if len(os.Args) > 1 {
		transcript = strings.Join(os.Args[1:], " ")
	}
	if err := run(context.Background(), eng, transcript, os.Stdout); err != nil {
		var failed *engine.TurnError
		if errors.As(err, &failed) {
			fmt.Fprintf(os.Stderr, "inprocess: the turn failed (%s, retryable %t)\n", failed.Code, failed.Retryable)
		} else {
			fmt.Fprintln(os.Stderr, "inprocess:", err)
		}
		os.Exit(1)
	}
}
