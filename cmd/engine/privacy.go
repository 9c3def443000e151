package main

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/convengine/engine/pii"
)

// logHandler redacts card numbers and IBANs from every log line, whatever wrote it.
func logHandler(next slog.Handler) slog.Handler {
	det, err := pii.New(&pii.Options{Kinds: []pii.Kind{pii.Card, pii.IBAN}})
	if err != nil {
		panic(err) // fixed options
	}
	return pii.RedactingHandler(next, det)
}

// newPrivacy applies each tenant's privacy policy (the demo tenants': the banking preset),
// counting what it handled as engine.pii.handled{tenant, kind, where} when metrics are on.
func newPrivacy(mx *metrics) (*pii.Privacy, error) {
	opts := &pii.PrivacyOptions{}
	if mx != nil {
		handled, err := mx.provider.Meter("github.com/convengine/engine/pii").Int64Counter("engine.pii.handled",
			metric.WithDescription("Personal data found in turns, by tenant, kind and where it was handled (model, user, backend, refused); never values."))
		if err != nil {
			return nil, err
		}
		opts.Handled = func(tenant string, k pii.Kind, where string, n int) {
			handled.Add(context.Background(), int64(n), metric.WithAttributes(
				attribute.String("tenant", tenant), attribute.String("kind", k.String()), attribute.String("where", where)))
		}
	}
	return pii.NewPrivacy(opts)
}
