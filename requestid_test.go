package engine

import (
	"regexp"
	"testing"
)

// requestIDPattern is the request id rule that validRequestIDSyntax writes out.
var requestIDPattern = regexp.MustCompile(`^(prod|stg)-[A-Za-z0-9._:-]{1,128}$`)

func FuzzRequestIDSyntax(f *testing.F) {
	for _, s := range []string{"prod-1", "stg-a.b_c:d-e", "prod-", "stg-", "dev-1", "prod-é", "prod-a b", "PROD-1", "prod-1\n",
		"prod-" + string(make([]byte, 129)), "prod-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if got, want := validRequestIDSyntax(id), requestIDPattern.MatchString(id); got != want {
			t.Fatalf("%q: %v, the pattern says %v", id, got, want)
		}
	})
}
