package response

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

func TestTitle(t *testing.T) {
	for code, want := range map[string]string{"unknown_engine_key": "Unknown engine key", "invalid_dpop_proof": "Invalid DPoP proof",
		"internal": "Internal error", "": "Error", "x": "X"} {
		if got := Title(code); got != want {
			t.Errorf("Title(%q) = %q, want %q", code, got, want)
		}
	}
}

func TestWriteProblem(t *testing.T) {
	rec := httptest.NewRecorder()
	w := &Recorder{ResponseWriter: rec}
	WriteProblem(w, http.StatusTooManyRequests, "rate_limited", http.Header{"Retry-After": {"3"}}, nil)
	if w.Code != "rate_limited" || rec.Code != http.StatusTooManyRequests || rec.Body.String() != internalProblem {
		t.Errorf("wrote %d %q, noted %q", rec.Code, rec.Body, w.Code)
	}
	for k, v := range map[string]string{"Retry-After": "3", "Content-Type": "application/problem+json", "Cache-Control": "no-store",
		"Content-Length": strconv.Itoa(len(internalProblem))} {
		if got := rec.Header().Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
}

func TestTruncate(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"voice", 5, "voice"},
		{"voices", 5, "voice…"},
		{"ñandú", 3, "ñan…"},
		{"", 3, ""},
	} {
		if got := Truncate(tt.s, tt.n); got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
