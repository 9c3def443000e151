package demobank

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// errorBody is the JSON of every error answer.
type errorBody struct {
	Error   string `json:"error"`
	Message string `json:"message,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		// Every value written is a plain struct of the bank's own making.
		panic(fmt.Sprintf("demobank: encoding a response: %v", err))
	}
	writeBody(w, status, body)
}

func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, errorBody{Error: code, Message: message})
}

func writeInvalid(w http.ResponseWriter, format string, args ...any) {
	writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf(format, args...))
}

// utf8Body answers 415 and returns false when r's body declares a charset other than UTF-8:
// JSON is UTF-8 (RFC 8259), and a body in another encoding would be misread.
func utf8Body(w http.ResponseWriter, r *http.Request) bool {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if cs, ok := params["charset"]; err == nil && ok && !strings.EqualFold(cs, "utf-8") {
		writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "the body must be UTF-8 JSON")
		return false
	}
	return true
}

// readQuery parses the query of r, refusing parameters other than allowed and repeated ones.
// An empty value counts as absent.
func readQuery(r *http.Request, allowed ...string) (map[string]string, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("the query is malformed")
	}
	out := make(map[string]string, len(q))
	for name, values := range q {
		switch {
		case !slices.Contains(allowed, name):
			return nil, fmt.Errorf("unknown parameter %q", name)
		case len(values) > 1:
			return nil, fmt.Errorf("parameter %q is repeated", name)
		case values[0] != "":
			out[name] = values[0]
		}
	}
	return out, nil
}

// problem is an error answer, and when the request may be tried again (none when 0).
type problem struct {
	status        int
	code, message string
	retryAfter    time.Duration
}

func (no *problem) write(w http.ResponseWriter) {
	if no.retryAfter > 0 {
		setRetryAfter(w, no.retryAfter)
	}
	writeError(w, no.status, no.code, no.message)
}

// setRetryAfter says in whole seconds, rounded up, when a refused request may be tried again.
func setRetryAfter(w http.ResponseWriter, d time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int((d+time.Second-1)/time.Second))))
}
