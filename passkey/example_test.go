package passkey_test

import (
	"fmt"
	"log"

	"github.com/convengine/engine"
	"github.com/convengine/engine/passkey"
)

// The engine becomes the relying party of the pages at bank.example: their sessions may
// register a passkey as their gate (gate_credential), and prove each action with it
// (auth.webauthn).
func ExampleNew() {
	var cfg engine.Config // with Tenants, Model, SigningKey …
	var err error
	cfg.Passkeys, err = passkey.New(passkey.Options{RPID: "bank.example", Origins: []string{"https://bank.example"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cfg.Passkeys != nil)
	// Output: true
}
