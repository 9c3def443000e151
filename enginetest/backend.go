package enginetest

import (
	"net/http"
	"sync"
	"time"
)

// Backend wraps a tenant backend's handler for tests: it records the headers of every request
// and can delay its answers. It is safe for concurrent use.
type Backend struct {
	next  http.Handler
	mu    sync.Mutex
	seen  []http.Header
	delay time.Duration
}

// NewBackend returns a Backend in front of next.
func NewBackend(next http.Handler) *Backend { return &Backend{next: next} }

// ServeHTTP records the request's headers, waits for the delay (or the client to go away) and
// passes the request on.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.seen = append(b.seen, r.Header.Clone())
	d := b.delay
	b.mu.Unlock()
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
	b.next.ServeHTTP(w, r)
}

// Received returns the headers of the requests received since the last Reset.
func (b *Backend) Received() []http.Header {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]http.Header(nil), b.seen...)
}

// Reset forgets the requests received so far.
func (b *Backend) Reset() {
	b.mu.Lock()
	b.seen = nil
	b.mu.Unlock()
}

// SetDelay makes the backend wait d before each answer.
func (b *Backend) SetDelay(d time.Duration) {
	b.mu.Lock()
	b.delay = d
	b.mu.Unlock()
}
