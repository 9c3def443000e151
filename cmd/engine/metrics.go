package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// metrics are the engine's OpenTelemetry metrics: exported for Prometheus at /metrics of the
// debug address with -metrics, and over OTLP/HTTP with protobuf when the standard variables say
// where.
type metrics struct {
	handler  http.Handler // the Prometheus exposition; nil without -metrics
	otlp     bool         // exported over OTLP
	provider *sdkmetric.MeterProvider
	// registry takes the usage meter's counters too.
	registry *prometheus.Registry
}

// newMetrics returns nil when metrics are off: no -metrics, and neither
// OTEL_EXPORTER_OTLP_ENDPOINT (figures go to its /v1/metrics) nor
// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT set. The OTLP exporter reads the other standard variables
// itself (…_HEADERS, _TIMEOUT, _COMPRESSION, OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE),
// the reader OTEL_METRIC_EXPORT_INTERVAL (default 60 s); the resource is the traces'. Shut the
// provider down on exit: that exports the last figures.
func newMetrics(ctx context.Context, on bool, getenv func(string) string) (*metrics, error) {
	otlp := getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != ""
	if !on && !otlp {
		return nil, nil
	}
	res, err := newResource(ctx)
	if err != nil {
		return nil, err
	}
	mx := &metrics{otlp: otlp}
	opts := []sdkmetric.Option{sdkmetric.WithResource(res)}
	if on {
		registry := prometheus.NewRegistry()
		exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
		if err != nil {
			return nil, fmt.Errorf("-metrics: %w", err)
		}
		opts = append(opts, sdkmetric.WithReader(exporter))
		mx.handler, mx.registry = promhttp.HandlerFor(registry, promhttp.HandlerOpts{}), registry
	}
	if otlp {
		exporter, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("OTLP metric exporter: %w", err)
		}
		opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exporter)))
	}
	mx.provider = sdkmetric.NewMeterProvider(opts...)
	return mx, nil
}
