package engine

import (
	"regexp"
	"testing"
)

// requestIDPattern is the request id rule that validRequestIDSyntax writes out; hostIDPattern is
// the rule while the host chooses the environment.
var (
	requestIDPattern = regexp.MustCompile(`^(prod|stg)-[A-Za-z0-9._:-]{1,128}$`)
	hostIDPattern    = regexp.MustCompile(`^((prod|stg)-[A-Za-z0-9._:-]{1,128}|[A-Za-z0-9._:-]{1,128})$`)
)

func FuzzRequestIDSyntax(f *testing.F) {
	for _, s := range []string{"prod-1", "stg-a.b_c:d-e", "prod-", "stg-", "dev-1", "prod-é", "prod-a b", "PROD-1", "prod-1\n",
		"0b4f8a52-6c1e-4f2b-9d3a-5e7c8b9a0d1f", "",
		"prod-" + string(make([]byte, 129)), "prod-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if got, want := validRequestIDSyntax(id, false), requestIDPattern.MatchString(id); got != want {
			t.Fatalf("%q: %v, the pattern says %v", id, got, want)
		}
		if got, want := validRequestIDSyntax(id, true), hostIDPattern.MatchString(id); got != want {
			t.Fatalf("%q with the host's environment: %v, the pattern says %v", id, got, want)
		}
	})
}
