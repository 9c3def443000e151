package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"sync"

	"github.com/convengine/engine"
	"github.com/convengine/engine/examples/demobank"
	"github.com/convengine/engine/passkey"
)

// demo is the offline demo: its two tenants, each with a demo bank of its own for each
// environment, on loopback.
type demo struct {
	// tenant is the demo tenant (pk_demo, actions on the device gate's word); proof is the
	// tenant that requires device proofs (pk_demo_proof), whose bank is the reference bank:
	// it verifies every transfer's proof itself against the devices it enrolled.
	tenant, proof *engine.Tenant
	servers       []*http.Server
	// banks are the URLs of each tenant's banks: production, then staging.
	banks, proofBanks []string
	// enrolment serves the proof bank's enrolment routes (production), for the web page: the
	// demo's stand-in for the bank's own app.
	enrolment http.Handler
	// pin is the demo caller's PIN on the phone line, made at each start.
	pin string
}

// startDemo starts the demo's banks. The proof banks send their one-time enrolment codes to
// console, as a bank's SMS would, and accept the passkeys of wa.
func startDemo(log *slog.Logger, console io.Writer, wa *passkey.Options) (*demo, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return nil, err
	}
	d := &demo{pin: fmt.Sprintf("%06d", n)}
	phones := []demobank.Phone{{Number: demoCaller, PIN: d.pin, Token: "demo-phone-user"}}
	var mu sync.Mutex // one console line at a time
	proofOpts := &demobank.Options{RequireDeviceProof: true, Phones: phones, SendCode: func(user, code string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(console, "demo bank: one-time code for %s: %s\n", user, code)
	}}
	if wa != nil {
		proofOpts.PasskeyRPID, proofOpts.PasskeyOrigins = wa.RPID, wa.Origins
	}
	var proofBank *demobank.Bank
	// pk_demo's production and staging banks, then pk_demo_proof's: separate state each, so
	// that nothing reachable through pk_demo touches the proof tenant's accounts.
	for i := range 4 {
		var bank *demobank.Bank
		if i < 2 {
			bank = demobank.New(&demobank.Options{Phones: phones})
		} else {
			opts := *proofOpts
			bank = demobank.New(&opts)
			if proofBank == nil {
				proofBank = bank
			}
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("starting the demo bank: %w", err)
		}
		srv := &http.Server{Handler: bank, ReadHeaderTimeout: readHeaderTimeout,
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
		go srv.Serve(ln)
		d.servers = append(d.servers, srv)
		if i < 2 {
			d.banks = append(d.banks, "http://"+ln.Addr().String())
		} else {
			d.proofBanks = append(d.proofBanks, "http://"+ln.Addr().String())
		}
	}

	if d.tenant, err = demobank.Tenant(d.banks[0], d.banks[1]); err != nil {
		d.Close()
		return nil, err
	}
	if d.proof, err = demobank.ProofTenant(d.proofBanks[0], d.proofBanks[1]); err != nil {
		d.Close()
		return nil, err
	}
	enrol := http.NewServeMux()
	enrol.Handle("POST /devices/code", proofBank)
	enrol.Handle("POST /devices", proofBank)
	d.enrolment = http.MaxBytesHandler(enrol, 16<<10)
	return d, nil
}

func (d *demo) Close() error {
	var errs []error
	for _, s := range d.servers {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

func printDemo(w io.Writer, base string, d *demo) {
	fmt.Fprintf(w, `
Demo tenant ready. Engine key: %s
Try a turn:

  curl -N %s/engine \
    -H 'X-Engine-Key: %s' -H 'X-Token: demo-user' -H 'X-Request-ID: prod-try-1' \
    -H 'Content-Type: application/json' \
    -d '{"transcript":"what is my balance"}'

Other things to say: "show my recent transactions", "how close am I to my savings goal",
"send 20 dollars to Alex"; or {"mode":"home"} for the opening glance.

%s runs actions on the device gate's word alone (auth.method and verifiedAt), the spec's
basic mode, unfit for real money. %s is the reference bank: it moves money only with
a device proof that it verifies itself, from a device it enrolled with a one-time code (POST
/devices/code, then POST /devices; the codes are printed here, as the bank's SMS would be).

The demo banks' own APIs (the tenant backends; X-Token names the user):
  %s bank: production %s   staging %s
  %s bank: production %s   staging %s
`, demobank.EngineKey, base, demobank.EngineKey, demobank.EngineKey, demobank.ProofEngineKey,
		demobank.EngineKey, d.banks[0], d.banks[1], demobank.ProofEngineKey, d.proofBanks[0], d.proofBanks[1])
}
