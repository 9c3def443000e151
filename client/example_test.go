package client_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http/httptest"

	"github.com/convengine/engine"
	"github.com/convengine/engine/client"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/widgets"
)

// Example runs a turn of the demo bank through a device-bound session. The engine runs in
// process here; an app passes the engine's public URL instead.
func Example() {
	bank := httptest.NewServer(demobank.New(nil))
	defer bank.Close()
	tenant, _ := demobank.Tenant(bank.URL, "")
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

	c, err := client.New(srv.URL, &client.Options{
		EngineKey: demobank.EngineKey,
		UserToken: client.StaticToken("the end user's token for the bank"),
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	// At launch: a session bound to a key generated on this device.
	if _, err := c.CreateSession(ctx, &client.SessionOptions{Bind: true}); err != nil {
		log.Fatal(err)
	}
	stream, err := c.Turn(ctx, &client.TurnRequest{Transcript: "what is my balance"})
	if err != nil {
		log.Fatal(err)
	}
	defer stream.Close()
	for ev, err := range stream.Events() {
		if err != nil {
			log.Fatal(err)
		}
		switch ev := ev.(type) {
		case *client.SpeakEvent:
			fmt.Print(ev.Delta) // start speaking at once
		case *client.WidgetEvent:
			if stat, ok := ev.Widget.(widgets.Stat); ok {
				fmt.Printf("\n[%s: %s]\n", stat.Label, stat.Value)
			}
		}
	}
	// Output:
	// Your Everyday Checking balance is $1,234.56.
	// [Everyday Checking: $1,234.56]
}
