package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/convengine/engine/internal/debugstats"
	"github.com/convengine/engine/record"
)

// serveDebug serves the process's runtime figures and pprof profiles on addr, the tenants'
// usage at /usage, and the Prometheus metrics at /metrics when mx is not nil, apart from the
// engine's routes so that they are never public by accident: a metric names tenants, tools and
// error counts, and usage what each tenant spends. It returns a function that stops the server
// and the address it listens on.
func serveDebug(addr string, mx *metrics, usage http.Handler, records *record.Recorder, log *slog.Logger) (stop func(), bound string, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("-debug-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/", debugstats.Handler())
	mux.Handle("GET /usage", usage)
	if records != nil {
		// The conversation record, on the private address only: what users said is personal.
		mux.Handle("/records/", records.Handler())
	}
	if mx != nil && mx.handler != nil {
		mux.Handle("GET /metrics", mx.handler)
	}
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: readHeaderTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go srv.Serve(ln)
	return func() { srv.Close() }, ln.Addr().String(), nil
}
