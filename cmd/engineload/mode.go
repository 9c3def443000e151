package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/convengine/engine/client"
)

// A mode is one kind of operation the tool drives: SSE turns, executes, speech. A new kind of
// operation (the voice socket) is a new mode: one more entry in modes.
type mode interface {
	// describe says in a few words what one operation is, for the report.
	describe() string
	// worker prepares a worker (a session, confirm widgets) before the phase starts.
	worker(ctx context.Context, t *target, slot slot) (worker, error)
}

// slot is a worker's place in a phase.
type slot struct {
	// index is the worker's number, from 0 to count-1.
	index, count int
	// ops is how many measured operations the worker will run, zero when the phase runs for
	// a duration; warmup how many it runs before them.
	ops, warmup int
}

// A worker runs operations one after another; workers run concurrently.
type worker interface {
	// do runs one operation. start is when it was meant to start, from which its latencies
	// count. errExhausted means the worker has nothing left to do.
	do(ctx context.Context, start time.Time) (sample, error)
}

// errExhausted ends a worker that used up what it prepared (the confirm widgets of execute).
var errExhausted = errors.New("engineload: worker exhausted")

// modes are the operations the tool knows, by the name -mode takes.
var modes = map[string]func(*config) mode{
	"turn":    func(c *config) mode { return &turnMode{cfg: c} },
	"execute": func(c *config) mode { return &executeMode{cfg: c, ledger: c.ledger} },
	"tts":     func(c *config) mode { return &ttsMode{cfg: c} },
	"voice":   func(c *config) mode { return &voiceMode{cfg: c} },
	"idle":    func(c *config) mode { return &idleMode{cfg: c} },
}

func modeNames() string {
	names := make([]string, 0, len(modes))
	for n := range modes {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// target is one server a phase drives.
type target struct {
	// name labels the target in reports: "engine", "bare", or the URL's host.
	name string
	url  string
	key  string
	// pid is the server's process when it runs on this machine (0: unknown).
	pid int
	// stats is the server's /debug/stats URL, "" when it has none.
	stats string
	// bank is the URL of the demo bank behind the engine, whose ledger is checked after
	// executes; "" when unknown.
	bank string
	// offset is the model's configured first-token delay, subtracted for the added latency.
	offset time.Duration
	// http sends every request of the phase.
	http *http.Client
}

// newHTTPClient returns a client that keeps a connection per concurrent operation.
func newHTTPClient(conns int, timeout time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns + 16,
		MaxIdleConnsPerHost: conns + 16,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &http.Client{Transport: tr, Timeout: timeout}
}

// newClient returns an engine client for t whose user token is taken from the context (see
// withUserToken), else the configured one.
func (c *config) newClient(t *target) (*client.Client, error) {
	prefix := "prod-"
	if c.staging {
		prefix = "stg-"
	}
	var seq atomic.Uint64
	base := strconv.FormatInt(time.Now().UnixNano(), 36)
	return client.New(t.url, &client.Options{
		EngineKey:       t.key,
		UserToken:       ctxToken(c.token),
		RequestIDPrefix: prefix,
		// Cheaper than random ids, and unique within the run.
		NewRequestID: func() string { return "load-" + base + "-" + strconv.FormatUint(seq.Add(1), 36) },
		HTTPClient:   t.http,
	})
}

// socketUser is the user token of a socket worker: one user per socket.
func (c *config) socketUser(s slot) string {
	return c.token + ".socket." + c.runID + "." + strconv.Itoa(s.index)
}

type tokenKey struct{}

// withUserToken makes requests made with ctx carry token as X-Token.
func withUserToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenKey{}, token)
}

// ctxToken is a client.TokenSource: the context's token, else itself.
type ctxToken string

func (t ctxToken) UserToken(ctx context.Context) (string, error) {
	if v, ok := ctx.Value(tokenKey{}).(string); ok {
		return v, nil
	}
	return string(t), nil
}

func (t ctxToken) String() string { return "[redacted]" }

// errorCode classifies a failed operation: the engine's problem code, the HTTP status of an
// answer that is not a problem, or the kind of transport failure.
func errorCode(err error) string {
	var ce *client.Error
	switch {
	case errors.As(err, &ce) && ce.Code != "":
		return ce.Code
	case errors.As(err, &ce):
		return "http_" + strconv.Itoa(ce.Status)
	case errors.Is(err, context.DeadlineExceeded), os.IsTimeout(err):
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection_refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection_reset"
	case errors.Is(err, client.ErrIncompleteStream):
		return "incomplete_stream"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return "network"
	}
	return "other"
}

// statusCode is the error code of an HTTP answer that is not a problem.
func statusCode(status int) string { return fmt.Sprintf("http_%d", status) }
