package redisstore

import (
	"errors"
	"testing"

	"github.com/convengine/engine"
)

// FuzzRecords reads arbitrary values as records: never a panic, never a session without an
// error or an id, and never an action record read as "no record", which would hand out a
// claim.
func FuzzRecords(f *testing.F) {
	for _, s := range []string{
		`{"v":1,"session":{"ID":"a","ExpiresAt":"2099-01-01T00:00:00Z","Metadata":null}}`,
		`{"v":1,"state":"running"}`,
		`{"v":1,"state":"done","result":"e30="}`,
		`{"v":1,"state":"done"}`,
		`{"v":2,"state":"done","sealed":"e30="}`, `{"v":2}`, `{"v":3}`, `{"v":0}`, `{"v":1.5}`, `{"v":null}`, `[]`, `null`, `"x"`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if s, err := decodeSession(data); (s == nil) == (err == nil) {
			t.Fatalf("decodeSession(%q) = %v, %v", data, s, err)
		} else if err != nil && !errors.Is(err, ErrUnreadable) {
			t.Fatalf("decodeSession(%q): %v does not wrap ErrUnreadable", data, err)
		}
		const key = "engine:action:pk_demo:{a}"
		for _, s := range []*Store{{}, {sealer: newSealer([]byte("a signing key of thirty-two bytes"))}} {
			r, err := s.decodeAction(key, data)
			if r == nil && err == nil {
				t.Fatalf("decodeAction(%q) = nil, nil", data)
			}
			if err != nil && !errors.Is(err, ErrUnreadable) && !errors.Is(err, engine.ErrActionInProgress) {
				t.Fatalf("decodeAction(%q): %v", data, err)
			}
			if err == nil {
				if got, err := s.decodeAction(key, []byte(s.encodeResult(key, r))); err != nil || string(got) != string(r) {
					t.Fatalf("a result does not round-trip: %q, %q %v", r, got, err)
				}
			}
		}
	})
}
