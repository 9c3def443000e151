package token

import (
	"bytes"
	"strings"
	"testing"
)

// TestSealedArguments: sealed arguments open with the same signing key only, and a changed
// bit, another key or garbage is ErrInvalidAction; two seals of the same arguments differ.
func TestSealedArguments(t *testing.T) {
	a, _ := NewActions(bytes.Repeat([]byte{1}, 32))
	other, _ := NewActions(bytes.Repeat([]byte{2}, 32))
	args := []byte(`{"amount":20,"card":"4111111111111111"}`)
	sealed := a.SealArguments(args)
	if strings.Contains(sealed, "4111") || sealed == a.SealArguments(args) {
		t.Fatalf("sealed %q reads or repeats", sealed)
	}
	if got, err := a.OpenArguments(sealed); err != nil || !bytes.Equal(got, args) {
		t.Fatalf("opened %q, %v", got, err)
	}
	b := []byte(sealed)
	b[len(b)/2] ^= 1
	for _, bad := range []string{string(b), "", "!!", sealed[:10]} {
		if _, err := a.OpenArguments(bad); err != ErrInvalidAction {
			t.Errorf("%q opened: %v", bad, err)
		}
	}
	if _, err := other.OpenArguments(sealed); err != ErrInvalidAction {
		t.Errorf("another engine's key opened it: %v", err)
	}
}
