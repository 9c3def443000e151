// Package response holds what the engine's handlers write and note about a response: a
// problem's JSON as application/problem+json ([WriteProblem]) and its [Title], what it quotes
// of a client's values cut short ([Truncate]); a
// [Recorder] of the status and problem code answered, for the engine's Request hook, with the
// request's method as a bounded label; the WAV stream a synthesis is written as
// ([WriteWAV]), for the speech endpoint; and the readers a synthesis is handed out as, which
// count what was read ([Counted]) or give a slot back ([OnClose]) when it ends; and the answer
// of a health probe ([Health]).
package response

import "net/http"

// Recorder notes the status and problem code of a response. It unwraps, so that
// http.ResponseController (flushes, the socket's hijack) reaches the original. A Recorder serves
// one request; it is not safe for concurrent use.
type Recorder struct {
	http.ResponseWriter
	// Status is the first status written, 200 when the body is written first, 0 for none.
	Status int
	// Code is the problem code of a problem+json answer, set by whoever writes it.
	Code string
}

// WriteHeader notes the first status and writes it.
func (w *Recorder) WriteHeader(status int) {
	if w.Status == 0 {
		w.Status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

// Write notes 200 when no status was written, and writes b.
func (w *Recorder) Write(b []byte) (int, error) {
	if w.Status == 0 {
		w.Status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap returns the wrapped ResponseWriter.
func (w *Recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// KnownMethod returns m when it is a method of HTTP's, and "OTHER" otherwise, so that what a
// client writes as its method cannot grow the observer's labels.
func KnownMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "OTHER"
}
