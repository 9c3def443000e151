package dpop

import (
	"errors"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestVerifierRequest(t *testing.T) {
	f := newProofFixture(t)
	public, _ := url.Parse("https://api.example.com")
	v := &Verifier{PublicURL: public, MaxAge: testMaxAge, MaxFuture: testMaxFuture}
	r := httptest.NewRequest("POST", "http://10.0.0.1:8080/engine", nil)
	proof, err := v.Request(r, []string{f.proof("j1")}, f.token, f.jkt, f.now)
	if err != nil || proof.JTI != "j1" || proof.JKT != f.jkt {
		t.Fatalf("a good proof: %+v %v", proof, err)
	}
	key, until := v.Replay(proof)
	if other, _ := v.Replay(&Proof{JKT: f.jkt, JTI: "j2", IAT: proof.IAT}); !strings.HasPrefix(key, "dpop:") || key == other {
		t.Errorf("replay keys %q and %q", key, other)
	}
	if want := proof.IAT.Add(testMaxAge + time.Second); !until.Equal(want) {
		t.Errorf("kept until %v, want %v", until, want)
	}

	var pe *Error
	for name, proofs := range map[string][]string{"none": nil, "two": {f.proof("a"), f.proof("b")}} {
		if _, err := v.Request(r, proofs, f.token, f.jkt, f.now); !errors.As(err, &pe) {
			t.Errorf("%s: %v", name, err)
		}
	}
	v.Nonces = NewNonces([]byte("0123456789abcdef0123456789abcdef"), time.Minute)
	if _, err := v.Request(r, []string{f.proof("j3")}, f.token, f.jkt, f.now); !errors.As(err, &pe) || !pe.NeedNonce {
		t.Errorf("a proof without the nonce: %v", err)
	}
}
