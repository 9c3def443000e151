package main

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/convengine/engine"
	"github.com/convengine/engine/otel"
)

// metrics are the engine's OpenTelemetry metrics, exported for Prometheus at /metrics of the
// debug address.
type metrics struct {
	observer *engine.Observer
	handler  http.Handler
	provider *sdkmetric.MeterProvider
}

// newMetrics returns nil when metrics are off.
func newMetrics(on bool) (*metrics, error) {
	if !on {
		return nil, nil
	}
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	if err != nil {
		return nil, fmt.Errorf("-metrics: %w", err)
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	obs, err := otel.New(&otel.Options{TracerProvider: noop.NewTracerProvider(), MeterProvider: provider})
	if err != nil {
		return nil, fmt.Errorf("-metrics: %w", err)
	}
	return &metrics{observer: obs.Observer(), handler: promhttp.HandlerFor(registry, promhttp.HandlerOpts{}), provider: provider}, nil
}
