package headers_test

import (
	"regexp"
	"testing"

	"github.com/convengine/engine/internal/headers"
)

// requestIDPattern is the request id rule that ids.ValidRequest writes out; hostIDPattern is
// the rule while the host chooses the environment.
var (
	requestIDPattern = regexp.MustCompile(`^(prod|stg)-[A-Za-z0-9._:-]{1,128}$`)
	hostIDPattern    = regexp.MustCompile(`^((prod|stg)-[A-Za-z0-9._:-]{1,128}|[A-Za-z0-9._:-]{1,128})$`)
	turnIDPattern    = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

func FuzzRequestIDSyntax(f *testing.F) {
	for _, s := range []string{"prod-1", "stg-a.b_c:d-e", "prod-", "stg-", "dev-1", "prod-é", "prod-a b", "PROD-1", "prod-1\n",
		"0b4f8a52-6c1e-4f2b-9d3a-5e7c8b9a0d1f", "",
		"prod-" + string(make([]byte, 129)), "prod-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if got, want := headers.ValidRequestID(id, false), requestIDPattern.MatchString(id); got != want {
			t.Fatalf("%q: %v, the pattern says %v", id, got, want)
		}
		if got, want := headers.ValidRequestID(id, true), hostIDPattern.MatchString(id); got != want {
			t.Fatalf("%q with the host's environment: %v, the pattern says %v", id, got, want)
		}
	})
}

func FuzzTurnID(f *testing.F) {
	for _, s := range []string{"0b4f8a52-6c1e-4f2b-9d3a-5e7c8b9a0d1f", "0B4F8A52-6C1E-4F2B-9D3A-5E7C8B9A0D1F",
		"0b4f8a52-6c1e-4f2b-9d3a-5e7c8b9a0d1", "0b4f8a52-6c1e-4f2b-9d3a-5e7c8b9a0d1f0", "0b4f8a526c1e-4f2b-9d3a-5e7c8b9a0d1f-",
		"../../../../../../../../etc/passwd", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if got, want := headers.ValidTurnID(id), turnIDPattern.MatchString(id); got != want {
			t.Fatalf("%q: %v, the pattern says %v", id, got, want)
		}
	})
}

func TestSessionAuth(t *testing.T) {
	for _, tc := range []struct {
		vals          []string
		scheme, token string
		ok, bad       bool
	}{
		{[]string{"Bearer abc"}, "Bearer", "abc", true, false},
		{[]string{" dpop   abc "}, "DPoP", "abc", true, false},
		{[]string{"Bearer"}, "Bearer", "", false, false},
		{[]string{"Bearer abcdefghi"}, "Bearer", "abcdefghi", false, false},
		{[]string{"Basic abc"}, "", "", false, true},
		{[]string{"Bearer a", "Bearer b"}, "", "", false, true},
	} {
		scheme, token, ok, bad := headers.SessionAuth(tc.vals, 8)
		if scheme != tc.scheme || token != tc.token || ok != tc.ok || (bad != "") != tc.bad {
			t.Errorf("SessionAuth(%q) = %q, %q, %v, %q", tc.vals, scheme, token, ok, bad)
		}
	}
}

func TestCallerRequestID(t *testing.T) {
	for _, tt := range []struct {
		id, env         string
		wantID, wantEnv string
		bad             bool
	}{
		{id: "prod-abc", wantID: "prod-abc"},
		{id: "stg-abc", wantID: "stg-abc", wantEnv: "staging"},
		{id: "abc", bad: true},
		{id: "abc", env: "production", wantID: "abc", wantEnv: "production"},
		{id: "stg-abc", env: "production", wantID: "stg-abc", wantEnv: "production"},
		{id: "a b", env: "staging", bad: true},
	} {
		id, env, bad := headers.CallerRequestID(tt.id, tt.env)
		if (bad != "") != tt.bad || id != tt.wantID || env != tt.wantEnv {
			t.Errorf("CallerRequestID(%q, %q) = %q, %q, %q", tt.id, tt.env, id, env, bad)
		}
	}
	for env, prefix := range map[string]string{"": "prod-", "production": "prod-", "staging": "stg-"} {
		id, got, bad := headers.CallerRequestID("", env)
		if bad != "" || got != env || !requestIDPattern.MatchString(id) || id[:len(prefix)] != prefix {
			t.Errorf("CallerRequestID(\"\", %q) = %q, %q, %q", env, id, got, bad)
		}
	}
}
