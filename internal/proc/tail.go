// Package proc holds what the adapters that run programs (espeak, flite, sphinx) share, and
// the check their tests and the engine's make that no child process was left behind.
package proc

import (
	"strings"
	"sync"
)

// Tail keeps the last Max bytes written to it, such as the end of a program's standard error
// for the error that reports its failure. It is safe for concurrent use.
type Tail struct {
	Max int

	mu  sync.Mutex
	buf []byte
}

func (t *Tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.Max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.Max:]...)
	}
	return len(b), nil
}

// String returns the bytes kept, without surrounding white space.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
