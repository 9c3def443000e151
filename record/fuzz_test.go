package record_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"strings"
	"testing"

	"github.com/convengine/engine/record"
)

// FuzzVerifyExport: an export edited by anyone (a customer's copy, an auditor's file) is
// checked without a panic, and an edited one is never found intact unless it says what the
// signed original said.
func FuzzVerifyExport(f *testing.F) {
	fx := newFixture(f, nil)
	e := newBank(f, fx.rec)
	say(f, e, "fuzz-conv", "what is my balance?")
	if err := fx.rec.Flush(context.Background()); err != nil {
		f.Fatal(err)
	}
	if _, err := fx.rec.Checkpoint(context.Background()); err != nil {
		f.Fatal(err)
	}
	var export bytes.Buffer
	if err := fx.rec.Export(context.Background(), &export, record.ExportQuery{Tenant: engineKey, User: ann.UserID}); err != nil {
		f.Fatal(err)
	}
	original := export.String()
	f.Add(original)
	f.Add(strings.Replace(original, "balance", "balancE", 1))
	f.Add(`{"type":"header","v":1}` + "\n")
	f.Add("")
	pub, _ := record.PublicKey(testKey)
	keys := []ed25519.PublicKey{pub}
	f.Fuzz(func(t *testing.T, in string) {
		rep, err := record.VerifyExport(strings.NewReader(in), keys)
		if err == nil && rep != nil && rep.OK() && in != original && !strings.Contains(original, strings.TrimSpace(in)) {
			// Intact means signed: only the original's bytes (or a run of them that holds its
			// signed end) verify.
			if !strings.Contains(in, `"type":"end"`) {
				t.Fatalf("an export without its signed end verified: %q", in)
			}
		}
	})
}
