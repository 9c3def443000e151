package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/convengine/engine/client"
)

// idleMode holds voice sockets open and idle: each worker opens one when it is prepared and
// keeps it for the phase, sending nothing; an operation is -hold of that, which fails when
// the server closed the socket. It measures what an idle socket costs the server: its memory
// and goroutines before the sockets were opened and with all of them open.
type idleMode struct {
	cfg *config

	before serverMemory // before the phase's sockets were opened
}

func (m *idleMode) describe() string {
	return fmt.Sprintf("an idle voice socket (WebSocket /engine/stream) held for %s", m.cfg.hold)
}

func (m *idleMode) worker(ctx context.Context, t *target, s slot) (worker, error) {
	c, err := m.cfg.newClient(t)
	if err != nil {
		return nil, err
	}
	ctx = withUserToken(ctx, m.cfg.socketUser(s))
	if err := m.cfg.startSession(ctx, c); err != nil {
		return nil, err
	}
	st, err := c.Stream(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("opening the voice socket: %w", err)
	}
	w := &idleWorker{st: st, hold: m.cfg.hold, ended: make(chan struct{})}
	go w.read()
	return w, nil
}

// A phaseObserver is a mode that measures the server around each phase, besides the
// operations: runPhase calls beforePrepare before the workers are prepared, and afterPhase
// after the phase, while the workers still hold what they opened.
type phaseObserver interface {
	beforePrepare(ctx context.Context, t *target) error
	afterPhase(ctx context.Context, t *target, workers int) (*SocketCost, error)
}

func (m *idleMode) beforePrepare(ctx context.Context, t *target) error {
	var err error
	m.before, err = readServerMemory(ctx, t)
	return err
}

func (m *idleMode) afterPhase(ctx context.Context, t *target, workers int) (*SocketCost, error) {
	open, err := readServerMemory(ctx, t)
	if err != nil {
		return nil, err
	}
	b := m.before
	sc := &SocketCost{Sockets: workers, MemoryBefore: b.total, MemoryOpen: open.total, HeapBefore: b.heap, HeapOpen: open.heap,
		RSSBefore: b.rss, RSSOpen: open.rss, GoroutinesBefore: b.goroutines, GoroutinesOpen: open.goroutines}
	if open.stats {
		sc.ServerSockets = open.sockets
	}
	per := func(before, after uint64) float64 {
		return round3((float64(after) - float64(before)) / float64(workers))
	}
	if b.stats && open.stats {
		sc.MemoryPerSocket = per(b.total, open.total)
		sc.HeapPerSocket = per(b.heap, open.heap)
		sc.GoroutinesPerSocket = per(b.goroutines, open.goroutines)
	}
	if b.rss > 0 && open.rss > 0 {
		sc.RSSPerSocket = per(b.rss, open.rss)
	}
	return sc, nil
}

// serverMemory is what the server's process holds at one moment.
type serverMemory struct {
	stats      bool // from its /debug/stats (after a collection)
	total      uint64
	heap       uint64
	goroutines uint64
	sockets    int64
	rss        uint64 // from /proc, when the pid is known; zero otherwise
}

func readServerMemory(ctx context.Context, t *target) (serverMemory, error) {
	var m serverMemory
	if t.stats != "" {
		s, err := fetchStats(ctx, t.http, t.stats, false)
		if err != nil {
			return m, err
		}
		m.stats, m.total, m.heap, m.goroutines, m.sockets = true, s.TotalMemory, s.HeapLive, s.Goroutines, s.Sockets
	}
	if t.pid > 0 {
		rss, err := processRSS(t.pid)
		if err != nil {
			return m, err
		}
		m.rss = rss
	}
	return m, nil
}

// idleWorker holds a socket. Its reader reads the socket, which answers the server's pings,
// until the socket ends.
type idleWorker struct {
	st    *client.Stream
	hold  time.Duration
	ended chan struct{}
	err   error // why the socket ended, once ended is closed
	lost  bool  // the socket's end was reported
}

func (w *idleWorker) read() {
	defer close(w.ended)
	for {
		if _, err := w.st.Next(context.Background()); err != nil {
			w.err = err
			return
		}
	}
}

func (w *idleWorker) do(ctx context.Context, start time.Time) (sample, error) {
	if w.lost {
		return sample{}, errExhausted
	}
	t := time.NewTimer(w.hold)
	defer t.Stop()
	select {
	case <-t.C:
		return sample{total: time.Since(start)}, nil
	case <-w.ended:
		w.lost = true
		return sample{total: time.Since(start), code: socketErrorCode(w.err)}, nil
	case <-ctx.Done():
		return sample{}, nil
	}
}

// Close closes the socket and waits for its reader.
func (w *idleWorker) Close() error {
	err := w.st.Close()
	<-w.ended
	return err
}

// SocketCost is what idle voice sockets cost the server, in an idle run: its memory and
// goroutines before the sockets were opened and with all of them open, after a collection.
type SocketCost struct {
	Sockets int `json:"sockets"`
	// ServerSockets is the number of sockets the server counted open (-local).
	ServerSockets int64 `json:"server_sockets,omitempty"`
	// MemoryBefore and MemoryOpen are all the memory the Go runtime mapped.
	MemoryBefore uint64 `json:"memory_before_bytes,omitempty"`
	MemoryOpen   uint64 `json:"memory_open_bytes,omitempty"`
	HeapBefore   uint64 `json:"heap_live_before_bytes,omitempty"`
	HeapOpen     uint64 `json:"heap_live_open_bytes,omitempty"`
	// RSSBefore and RSSOpen are the process's resident memory, when its pid is known.
	RSSBefore           uint64  `json:"rss_before_bytes,omitempty"`
	RSSOpen             uint64  `json:"rss_open_bytes,omitempty"`
	GoroutinesBefore    uint64  `json:"goroutines_before,omitempty"`
	GoroutinesOpen      uint64  `json:"goroutines_open,omitempty"`
	MemoryPerSocket     float64 `json:"memory_per_socket_bytes,omitempty"`
	HeapPerSocket       float64 `json:"heap_live_per_socket_bytes,omitempty"`
	RSSPerSocket        float64 `json:"rss_per_socket_bytes,omitempty"`
	GoroutinesPerSocket float64 `json:"goroutines_per_socket,omitempty"`
}

// printSockets writes the socket costs of a run for people.
func printSockets(w io.Writer, sc *SocketCost) {
	if sc == nil {
		return
	}
	fmt.Fprintf(w, "  sockets: %d open", sc.Sockets)
	if sc.ServerSockets > 0 {
		fmt.Fprintf(w, " (%d counted by the server)", sc.ServerSockets)
	}
	fmt.Fprintln(w)
	if sc.MemoryOpen > 0 {
		fmt.Fprintf(w, "  server memory: %s before, %s with the sockets open: %.1f KB per socket (live heap %.1f KB per socket)\n",
			bytesString(sc.MemoryBefore), bytesString(sc.MemoryOpen), sc.MemoryPerSocket/1024, sc.HeapPerSocket/1024)
	}
	if sc.RSSOpen > 0 {
		fmt.Fprintf(w, "  server RSS: %s before, %s with the sockets open: %.1f KB per socket\n",
			bytesString(sc.RSSBefore), bytesString(sc.RSSOpen), sc.RSSPerSocket/1024)
	}
	if sc.GoroutinesOpen > 0 {
		fmt.Fprintf(w, "  server goroutines: %d before, %d with the sockets open: %.2f per socket\n",
			sc.GoroutinesBefore, sc.GoroutinesOpen, sc.GoroutinesPerSocket)
	}
}
