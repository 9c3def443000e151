package dpop

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func TestChallenges(t *testing.T) {
	sum := sha256.Sum256([]byte("convengine gate credential\x00thumb"))
	if got := GateChallenge("thumb"); hex.EncodeToString(got) != hex.EncodeToString(sum[:]) {
		t.Errorf("GateChallenge = %x, want %x", got, sum)
	}
	if string(GateChallenge("thumb")) == string(GateChallenge("other")) {
		t.Error("two devices' sessions share a gate challenge")
	}
	// SHA-256 of "abc".
	if got := hex.EncodeToString(ActionChallenge("abc")); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("ActionChallenge = %s", got)
	}
	if got := CounterKey("pk_demo", "cred", 42); got != "passkey-counter:pk_demo:cred:42" {
		t.Errorf("CounterKey = %q", got)
	}
	if got := CredentialKey("pk_demo", "user", "cred"); got != "passkey-credential:pk_demo:user:cred" {
		t.Errorf("CredentialKey = %q", got)
	}
}
