package main

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/convengine/engine"
	"github.com/convengine/engine/openai"
	"github.com/convengine/engine/otel"
	"github.com/convengine/engine/pii"
)

// newTracing returns a tracer provider that exports the engine's spans over OTLP/HTTP with
// protobuf, in batches, when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// is set, and nil otherwise. The exporter reads the other standard variables itself
// (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION, …), the SDK OTEL_TRACES_SAMPLER and
// OTEL_SERVICE_NAME (default "engine") and OTEL_RESOURCE_ATTRIBUTES. Shut it down on exit: that
// sends the spans still batched.
func newTracing(ctx context.Context, getenv func(string) string) (*sdktrace.TracerProvider, error) {
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return nil, nil
	}
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := newResource(ctx)
	if err != nil {
		return nil, err
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res)), nil
}

// newResource describes the process to the exporters: the service "engine" (OTEL_SERVICE_NAME
// names another), its version, and OTEL_RESOURCE_ATTRIBUTES.
func newResource(ctx context.Context) (*resource.Resource, error) {
	// Later detectors win: the environment over the defaults.
	res, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName("engine"), semconv.ServiceVersion(engine.Version)),
		resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	return res, nil
}

// newObserver returns the engine's Observer reporting to the metrics (Prometheus's, OTLP's) and
// the tracer provider that are on, or nil when neither is. The ids of its spans are masked as
// the log's lines are.
func newObserver(mx *metrics, tp *sdktrace.TracerProvider, privacy *pii.Privacy, getenv func(string) string, tenantsFile bool) (*engine.Observer, error) {
	if mx == nil && tp == nil {
		return nil, nil
	}
	opts := &otel.Options{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider(),
		Mask: privacy.TraceMasker(nil)}
	if tp != nil {
		opts.TracerProvider = tp
	}
	if mx != nil {
		opts.MeterProvider = mx.provider
	}
	opts.Provider, opts.Model = genAIModel(getenv, tenantsFile)
	obs, err := otel.New(opts)
	if err != nil {
		return nil, err
	}
	return obs.Observer(), nil
}

// genAIModel names the provider and model of the chat spans when one model answers every
// tenant: OpenAI's chat completions (or a compatible server's, which speaks OpenAI's API) and no
// tenants file, whose tenants may name other models. Otherwise, and for the offline intent
// model, which no provider serves, it returns "" and the spans carry neither rather than a
// wrong one.
func genAIModel(getenv func(string) string, tenantsFile bool) (provider, model string) {
	if tenantsFile || getenv("OPENAI_API_KEY") == "" && getenv("OPENAI_BASE_URL") == "" {
		return "", ""
	}
	model = getenv("ENGINE_MODEL")
	if model == "" {
		model = openai.DefaultModel
	}
	return "openai", model
}
