package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
)

// demo is the offline demo: a demo bank for each environment, on loopback, and its tenant.
type demo struct {
	// tenant is the demo tenant; proof is the same bank's tenant that requires device proofs.
	tenant, proof *engine.Tenant
	servers       []*http.Server
	// banks are the URLs of the banks: production, then staging.
	banks []string
}

func startDemo(log *slog.Logger) (*demo, error) {
	d := &demo{}
	var urls []string
	for range 2 { // production, staging: separate banks, separate state
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("starting the demo bank: %w", err)
		}
		srv := &http.Server{Handler: demobank.New(nil), ReadHeaderTimeout: readHeaderTimeout,
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
		go srv.Serve(ln)
		d.servers = append(d.servers, srv)
		urls = append(urls, "http://"+ln.Addr().String())
	}
	d.banks = urls
	t, err := demobank.Tenant(urls[0], urls[1])
	if err != nil {
		d.Close()
		return nil, err
	}
	d.tenant = t
	if d.proof, err = demobank.ProofTenant(urls[0], urls[1]); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

func (d *demo) Close() error {
	var errs []error
	for _, s := range d.servers {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

func printDemo(w io.Writer, base string, banks []string) {
	fmt.Fprintf(w, `
Demo tenant ready. Engine key: %s
Try a turn:

  curl -N %s/engine \
    -H 'X-Engine-Key: %s' -H 'X-Token: demo-user' -H 'X-Request-ID: prod-try-1' \
    -H 'Content-Type: application/json' \
    -d '{"transcript":"what is my balance"}'

Other things to say: "show my recent transactions", "how close am I to my savings goal",
"send 20 dollars to Alex"; or {"mode":"home"} for the opening glance.

The same bank under engine key %s runs transfers only with a device proof (auth.proof, signed
by the gate key of a device-bound session); the client package and the web client sign one.

The demo bank's own API (the tenant backend; X-Token names the user):
  production %s   staging %s
`, demobank.EngineKey, base, demobank.EngineKey, demobank.ProofEngineKey, banks[0], banks[1])
}
