package main

import (
	"log/slog"

	"github.com/convengine/engine/redisstore"
	"github.com/convengine/engine/usage"
)

// newMeter returns the meter of the engine's usage and the ledger it writes to: in Redis,
// shared by every replica, when the server runs with Redis; in memory otherwise. Its counters
// go to the -metrics registry when metrics are on.
func newMeter(st stores, mx *metrics, log *slog.Logger) (*usage.Meter, usage.Reader, error) {
	var (
		sink   usage.Sink
		reader usage.Reader
	)
	if st.redis != nil {
		l := redisstore.NewUsageLedger(st.redis, 0)
		sink, reader = l, l
	} else {
		l := &usage.Memory{}
		sink, reader = l, l
	}
	opts := &usage.Options{Sink: sink, Logger: log}
	if mx != nil && mx.registry != nil { // not with OTLP alone
		opts.Registerer = mx.registry
	}
	m, err := usage.New(opts)
	if err != nil {
		return nil, nil, err
	}
	return m, reader, nil
}
