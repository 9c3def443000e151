// Package usage meters what the engine's work costs, per tenant: every call of the model with
// its tokens (as the provider reported them, or the engine's estimate, marked as such), every
// tool call, every transcription and synthesis with its seconds of audio and characters.
//
// A [Meter] takes the engine's [engine.Observer] events, makes a [Record] of each, counts it in
// Prometheus counters and hands the records, in batches, to a [Sink] the host implements
// (its billing's store) or to a ledger of this package: [Memory], or the Redis ledger of
// package redisstore shared by every replica. [Handler] serves a ledger's [Report] to the
// operator.
//
// # Metering
//
//	ledger := &usage.Memory{}
//	meter, err := usage.New(&usage.Options{Sink: ledger, Registerer: prometheus.DefaultRegisterer})
//	...
//	cfg.Observer = meter.Observer(otelObserver) // nil when there is no other observer
//	eng, err := engine.New(cfg)
//	...
//	eng.Shutdown(ctx)
//	meter.Close(ctx) // writes what is buffered
//
// The engine's hooks only append the record to the meter's buffer; the meter's own goroutine
// counts it and writes it. A sink that fails gets the same batch again, after a pause that
// grows to 30 seconds; meanwhile records wait in the buffer, up to Options.MaxBuffered
// (100 000 by default), past which new ones are dropped, counted in
// engine_usage_dropped_records_total and logged once a minute. What is buffered lives in the
// process's memory: a process that dies loses the records not yet written, at most the buffer
// and the batch being written; [Meter.Close] writes them, or reports how many it could not.
//
// # Reading
//
// [Handler] answers GET ?tenant=&from=&to= with a [Report] as JSON. It checks no
// credentials: mount it behind the host's own administrators' authentication, never on the
// engine's public address.
//
// # Metrics
//
// With Options.Registerer, the meter registers engine_usage_tokens_total{tenant,model,type,estimated},
// engine_usage_model_calls_total{tenant,outcome}, engine_usage_tool_calls_total{tenant,outcome},
// engine_usage_speech_seconds_total{tenant,kind,provider}, engine_usage_speech_characters_total{tenant,provider},
// engine_usage_dropped_records_total and engine_usage_sink_failures_total. Their tenant label is
// bounded by the tenants the engine's tenant store resolves: the engine observes work only for
// them. The model label takes at most 32 names per tenant, then "other".
package usage
