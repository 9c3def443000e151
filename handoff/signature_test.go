package handoff_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine/handoff"
)

// A signature is taken whatever the case of its hex, and names itself the same way, so that a
// replay in another case is refused as the same signature.
func TestVerifyCanonical(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"type":"agent.message","id":"h","text":"hi"}`)
	sig := handoff.Sign(secret, now, body)
	lower, err := handoff.Verify(secret, sig, body, now)
	if err != nil {
		t.Fatal(err)
	}
	upper, err := handoff.Verify(secret, "t="+strconv.FormatInt(now.Unix(), 10)+",v1="+strings.ToUpper(strings.SplitN(sig, "v1=", 2)[1]), body, now)
	if err != nil || upper != lower {
		t.Fatalf("upper-case hex: %q %v, want %q", upper, err, lower)
	}
	for _, tc := range []struct {
		name, header string
		at           time.Time
		want         error
	}{
		{"stale", sig, now.Add(6 * time.Minute), handoff.ErrStaleSignature},
		{"future", sig, now.Add(-6 * time.Minute), handoff.ErrStaleSignature},
		{"another body", handoff.Sign(secret, now, []byte("{}")), now, handoff.ErrBadSignature},
		{"another secret", handoff.Sign("another-secret-0123456789", now, body), now, handoff.ErrBadSignature},
		{"no v1", "t=" + strconv.FormatInt(now.Unix(), 10), now, handoff.ErrBadSignature},
		{"too many v1", sig + strings.Repeat(",v1=00", 9), now, handoff.ErrBadSignature},
		{"empty", "", now, handoff.ErrBadSignature},
	} {
		if _, err := handoff.Verify(secret, tc.header, body, tc.at); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// FuzzVerify: any header and body are refused or taken without a panic, and one taken names
// itself canonically (the same name a signature made by Sign at its time gets).
func FuzzVerify(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	f.Add(handoff.Sign(secret, now, []byte("{}")), []byte("{}"))
	f.Add("t=1800000000,v1=zz,v1=", []byte("x"))
	f.Add(" t = 1 , v1 = 00 ", []byte(""))
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		key, err := handoff.Verify(secret, header, body, now)
		if err != nil {
			return
		}
		ts, _, _ := strings.Cut(key, ".")
		sec, perr := strconv.ParseInt(ts, 10, 64)
		if perr != nil {
			t.Fatalf("taken with the name %q", key)
		}
		if again, err := handoff.Verify(secret, handoff.Sign(secret, time.Unix(sec, 0), body), body, now); err == nil && ts == strconv.FormatInt(sec, 10) && again != key {
			t.Fatalf("the same signature is named %q and %q", key, again)
		}
	})
}
