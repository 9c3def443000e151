package response

import (
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// titles holds the titles that a code does not spell well on its own.
var titles = map[string]string{
	"invalid_dpop_proof": "Invalid DPoP proof",
	"internal":           "Internal error",
}

// Title is the title of a problem of code: the code in words ("unknown_engine_key" is
// "Unknown engine key"), unless it spells a name badly ("Invalid DPoP proof").
func Title(code string) string {
	if t, ok := titles[code]; ok {
		return t
	}
	if code == "" {
		return "Error"
	}
	t := []byte(strings.ReplaceAll(code, "_", " "))
	if t[0] >= 'a' && t[0] <= 'z' {
		t[0] -= 'a' - 'A'
	}
	return string(t)
}

// Truncate cuts s to n characters, marking the cut: a problem's detail that quotes what a
// client sent quotes no more than that.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// internalProblem is what is written when a problem's JSON could not be made.
const internalProblem = `{"type":"about:blank","title":"Internal error","status":500,"code":"internal","retryable":false}`

// WriteProblem writes body, a problem's JSON, as application/problem+json with status and
// the problem's own header, never cached, and notes code in a [Recorder]. A nil body is
// written as the internal error's.
func WriteProblem(w http.ResponseWriter, status int, code string, header http.Header, body []byte) {
	if sw, ok := w.(*Recorder); ok {
		sw.Code = code
	}
	if body == nil {
		body = []byte(internalProblem)
	}
	h := w.Header()
	for k, v := range header {
		h[k] = v
	}
	h.Set("Content-Type", "application/problem+json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(body)
}
