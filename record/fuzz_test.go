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
// checked without a panic, and none is found intact without its signed end line.
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
	f.Add(original[:len(original)/2])
	f.Add(strings.Replace(original, "balance", "balancE", 1))
	f.Add(`{"type":"header","v":1}` + "\n")
	f.Add("")
	pub, _ := record.PublicKey(testKey)
	keys := []ed25519.PublicKey{pub}
	f.Fuzz(func(t *testing.T, in string) {
		rep, err := record.VerifyExport(strings.NewReader(in), keys)
		// Intact means signed: an export found intact holds a signed end line, whatever was
		// cut from it or added to it (a truncated export above all).
		if err == nil && rep != nil && rep.OK() && !strings.Contains(in, `"type":"end"`) {
			t.Fatalf("an export without its signed end verified: %q", in)
		}
	})
}
