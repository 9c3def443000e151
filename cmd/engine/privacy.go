package main

import (
	"context"
	"log/slog"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/convengine/engine/pii"
)

// logHandler masks card numbers and IBANs in every log line, whatever wrote it, and in a
// tenant's lines the kinds its privacy policy masks in logs.
func logHandler(next slog.Handler, privacy *pii.Privacy) slog.Handler {
	floor, err := pii.New(&pii.Options{Kinds: []pii.Kind{pii.Card, pii.IBAN}})
	if err != nil {
		panic(err) // fixed options
	}
	return privacy.LogHandler(next, floor)
}

// newPrivacy applies each tenant's privacy policy (the demo tenants': the banking preset). It
// is built before the logger, which masks each tenant's lines by it, and so before the
// metrics: what it handled is counted once counter.start is given them.
func newPrivacy() (*pii.Privacy, *piiCounter, error) {
	c := &piiCounter{}
	p, err := pii.NewPrivacy(&pii.PrivacyOptions{Handled: c.add})
	return p, c, err
}

// piiCounter counts what the privacy handled as engine.pii.handled{tenant, kind, where}.
type piiCounter struct {
	handled atomic.Pointer[metric.Int64Counter]
}

// start counts from now on, when metrics are on.
func (c *piiCounter) start(mx *metrics) error {
	if mx == nil {
		return nil
	}
	handled, err := mx.provider.Meter("github.com/convengine/engine/pii").Int64Counter("engine.pii.handled",
		metric.WithDescription("Personal data found in turns and log lines, by tenant, kind and where it was handled (model, user, backend, refused, logs); never values."))
	if err != nil {
		return err
	}
	c.handled.Store(&handled)
	return nil
}

func (c *piiCounter) add(tenant string, k pii.Kind, where string, n int) {
	if h := c.handled.Load(); h != nil {
		(*h).Add(context.Background(), int64(n), metric.WithAttributes(
			attribute.String("tenant", tenant), attribute.String("kind", k.String()), attribute.String("where", where)))
	}
}
