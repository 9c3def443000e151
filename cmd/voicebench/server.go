package main

import (
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/httptools"
	"github.com/convengine/engine/intent"
	"github.com/convengine/engine/sphinx"
	"github.com/convengine/engine/voice"
)

// The demo is served here from the same pieces as cmd/engine's offline demo, not with
// enginetest.NewDemo: that takes a testing.TB, which a program has no honest way to provide.
// What differs from cmd/engine is only what no turn reaches: no staging bank, no proof
// tenant, no synthesizer (a turn stream carries no audio) and no web client.

// demoEngine is the demo engine on a loopback port, with its bank on another.
type demoEngine struct {
	URL          string
	bank, server *http.Server
	engine       *engine.Engine
}

// startDemo serves the demo bank and the engine, which listens with pocketsphinx as
// cmd/engine does (cmd/engine/speech.go).
func startDemo() (*demoEngine, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	d := &demoEngine{}
	bankURL, bank, err := serve(demobank.New(nil))
	if err != nil {
		return nil, err
	}
	d.bank = bank
	tenant, err := demobank.Tenant(bankURL, "")
	if err != nil {
		d.Close()
		return nil, err
	}
	tenants, err := engine.NewStaticTenants(tenant)
	if err != nil {
		d.Close()
		return nil, err
	}
	ears, err := sphinx.New(&sphinx.Options{Grammar: intentGrammar, Confirm: intent.NumberWords, Unconfirmed: intent.WithoutAmounts})
	if err != nil {
		d.Close()
		return nil, err
	}
	key := make([]byte, 32)
	rand.Read(key)
	d.engine, err = engine.New(engine.Config{Tenants: tenants, Model: intent.New(nil), Toolset: httptools.New(nil),
		SigningKey: key, Transcriber: ears, Logger: quiet})
	if err != nil {
		d.Close()
		return nil, err
	}
	sockets, err := voice.New(d.engine, nil)
	if err != nil {
		d.Close()
		return nil, err
	}
	srv := &http.Server{Handler: d.engine.Handler(sockets.Routes()...), ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		d.Close()
		return nil, err
	}
	go srv.Serve(d.engine.Listener(srv, ln))
	d.server, d.URL = srv, "http://"+ln.Addr().String()
	return d, nil
}

// intentGrammar is cmd/engine's: pocketsphinx listens for a tenant's intent phrases; tenants
// without intents are heard free-form.
func intentGrammar(t *engine.Tenant, known func(string) bool) (string, error) {
	if len(t.Intents) == 0 {
		return "", nil
	}
	return intent.Grammar(t.Intents, &intent.GrammarOptions{Known: known})
}

func serve(h http.Handler) (string, *http.Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), srv, nil
}

// Close stops the servers and the engine.
func (d *demoEngine) Close() error {
	var errs []error
	if d.server != nil {
		errs = append(errs, d.server.Close())
	}
	if d.engine != nil {
		errs = append(errs, d.engine.Close())
	}
	if d.bank != nil {
		errs = append(errs, d.bank.Close())
	}
	return errors.Join(errs...)
}
