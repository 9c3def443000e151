package main

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// metrics are the engine's OpenTelemetry metrics, exported for Prometheus at /metrics of the
// debug address.
type metrics struct {
	handler  http.Handler
	provider *sdkmetric.MeterProvider
	// registry takes the usage meter's counters too.
	registry *prometheus.Registry
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
	return &metrics{handler: promhttp.HandlerFor(registry, promhttp.HandlerOpts{}), provider: provider, registry: registry}, nil
}
