// Package otel observes an engine with OpenTelemetry: a trace for each turn, named and
// attributed as the GenAI semantic conventions say (release 1.41.0 of
// go.opentelemetry.io/otel/semconv, the newest that has them), so that GenAI backends read it:
//
//	invoke_agent {tenant}       the turn (gen_ai.agent.name is the tenant's engine key)
//	├── chat {model}            each call of the model, with its token usage
//	├── execute_tool {tool}     each tool call
//	└── synthesis, transcription  speech, timed as the work itself
//
//	chat {model}                a prompt-cache warm-up at create-session: a trace of its
//	                            own, engine.warmup=true
//
// with the request id, tenant and environment; W3C trace context carried to tenant backends and
// MCP servers; the metrics gen_ai.client.token.usage and gen_ai.client.operation.duration; and
// metrics of turns, time to first speech, tool latency and errors by tool, answers by problem
// code, and open voice sockets.
//
//	obs, err := otel.New(&otel.Options{TracerProvider: tp, MeterProvider: mp, Provider: "openai", Model: "gpt-4o-mini"})
//	eng, err := engine.New(engine.Config{…, Observer: obs.Observer()})
//	tools := httptools.New(&httptools.Options{Client: &http.Client{Transport: otel.Transport(nil)}})
//
// Nothing secret becomes an attribute, and no content: events carry identifiers, names,
// durations, token counts and codes, never a token, a proof, a forwarded value, a prompt, a
// transcript, an answer or a tool's arguments or result. The ids a client chose (the request
// id, the conversation id) are masked as the engine's log masks them ([Options].Mask).
//
// Token counts are the provider's when it reported them (gen_ai.usage.*); when it did not, the
// engine's estimate goes under engine.usage.estimated_input_tokens and
// engine.usage.estimated_output_tokens instead, and into no gen_ai metric.
package otel

import (
	"context"
	"errors"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"
	"go.opentelemetry.io/otel/trace"

	"github.com/convengine/engine"
	"github.com/convengine/engine/pii"
)

// Options say where spans and metrics go. Nil providers are errors: pass the global ones
// (otel.GetTracerProvider()) explicitly if that is what you want.
type Options struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// Provider is gen_ai.provider.name of the model calls, such as "openai" (the values are
	// the semantic conventions'); "" leaves the attribute out, as for the offline intent model,
	// which no provider serves.
	Provider string
	// Model is gen_ai.request.model of the model calls, such as "gpt-4o-mini"; "" leaves it out.
	Model string
	// Mask masks the personal data in an id the client chose (engine.request_id from
	// X-Request-ID, gen_ai.conversation.id from context.sessionId or AG-UI's threadId) before
	// it becomes an attribute: give it [pii.Privacy.TraceMasker], so that a trace shows an id as
	// the engine's log does, with the tenant's kinds masked. Nil masks card numbers and IBANs.
	Mask func(tenant, s string) string
}

const scope = "github.com/convengine/engine"

// Observability holds the instruments an engine reports to.
type Observability struct {
	tracer     trace.Tracer
	turns      metric.Int64Counter
	turnTime   metric.Float64Histogram
	firstSpeak metric.Float64Histogram
	toolTime   metric.Float64Histogram
	toolErrors metric.Int64Counter
	problems   metric.Int64Counter
	speech     metric.Float64Histogram
	sockets    metric.Int64UpDownCounter
	rateLimits metric.Int64Counter
	breakers   metric.Int64Counter
	tokens     metric.Int64Histogram   // gen_ai.client.token.usage
	opTime     metric.Float64Histogram // gen_ai.client.operation.duration
	// model holds gen_ai.provider.name and gen_ai.request.model, those set; chat is the
	// name of the model calls' spans.
	model []attribute.KeyValue
	chat  string
	heard heldTranscriptions
	mask  func(tenant, s string) string
	// The attribute sets of a model call's metrics that never change, made once: an operation
	// that succeeded, and its input and output tokens.
	chatOK, chatInput, chatOutput metric.MeasurementOption
}

// New creates the instruments.
func New(opts *Options) (*Observability, error) {
	if opts == nil || opts.TracerProvider == nil || opts.MeterProvider == nil {
		return nil, errors.New("otel: Options.TracerProvider and Options.MeterProvider are required")
	}
	m := opts.MeterProvider.Meter(scope)
	o := &Observability{tracer: opts.TracerProvider.Tracer(scope), chat: "chat", mask: opts.Mask}
	if o.mask == nil {
		floor, _ := pii.NewPrivacy(nil) // no policy: the floor of cards and IBANs alone
		o.mask = floor.TraceMasker(nil)
	}
	if opts.Provider != "" {
		o.model = append(o.model, semconv.GenAIProviderNameKey.String(opts.Provider))
	}
	if opts.Model != "" {
		o.model = append(o.model, semconv.GenAIRequestModel(opts.Model))
		o.chat += " " + opts.Model
	}
	base := append([]attribute.KeyValue{semconv.GenAIOperationNameChat}, o.model...)
	n := len(base)
	o.chatOK = metric.WithAttributeSet(attribute.NewSet(base...))
	o.chatInput = metric.WithAttributeSet(attribute.NewSet(append(base[:n:n], semconv.GenAITokenTypeInput)...))
	o.chatOutput = metric.WithAttributeSet(attribute.NewSet(append(base[:n:n], semconv.GenAITokenTypeOutput)...))
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	var err error
	o.turns, err = m.Int64Counter("engine.turns", metric.WithDescription("Turns answered, by tenant, mode and error code."))
	add(err)
	o.turnTime, err = m.Float64Histogram("engine.turn.duration", metric.WithUnit("s"), metric.WithDescription("Duration of turns."))
	add(err)
	o.firstSpeak, err = m.Float64Histogram("engine.turn.first_speak", metric.WithUnit("s"),
		metric.WithDescription("Time from the start of a turn to its first speech."),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
	add(err)
	o.toolTime, err = m.Float64Histogram("engine.tool.duration", metric.WithUnit("s"), metric.WithDescription("Duration of tool calls, by tool and outcome."))
	add(err)
	o.toolErrors, err = m.Int64Counter("engine.tool.errors", metric.WithDescription("Tool calls that did not succeed, by tool and outcome."))
	add(err)
	o.problems, err = m.Int64Counter("engine.errors", metric.WithDescription("Error answers and turn errors, by code."))
	add(err)
	o.speech, err = m.Float64Histogram("engine.speech.duration", metric.WithUnit("s"), metric.WithDescription("Speech synthesis and transcription calls."))
	add(err)
	o.sockets, err = m.Int64UpDownCounter("engine.sockets.open", metric.WithDescription("Open voice sockets."))
	add(err)
	o.rateLimits, err = m.Int64Counter("engine.rate_limits", metric.WithDescription(
		"Requests refused by a rate limit, or checked by the process alone while the shared rate limiter failed, by tenant."))
	add(err)
	o.breakers, err = m.Int64Counter("engine.breaker.changes", metric.WithDescription(
		"Changes of state of the breakers of models and tenant backends (closed, open, half-open), and completions a fallback chain's degraded last resort answered (degraded), by name."))
	add(err)
	tokens, err := genaiconv.NewClientTokenUsage(m)
	add(err)
	o.tokens = tokens.Inst()
	opTime, err := genaiconv.NewClientOperationDuration(m)
	add(err)
	o.opTime = opTime.Inst()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return o, nil
}

// Observer returns the engine hooks that report to o.
func (o *Observability) Observer() *engine.Observer {
	return &engine.Observer{
		Request:    o.request,
		TurnStart:  o.turnStart,
		FirstSpeak: o.firstSpeech,
		TurnEnd:    o.turnEnd,
		ToolStart:  o.toolStart,
		ToolEnd:    o.toolEnd,
		Speech:     o.speechDone,
		Socket:     o.socket,
		RateLimit:  o.rateLimit,
		ModelCall:  o.modelCall,
		Breaker:    o.breaker,
	}
}

// requestID is the attribute of a request's id, masked: the client chose it.
func (o *Observability) requestID(tenant, id string) attribute.KeyValue {
	return attribute.String("engine.request_id", o.mask(tenant, id))
}

// conversationID is the attribute of a conversation's id, masked: the client may have chosen
// it.
func (o *Observability) conversationID(tenant, id string) attribute.KeyValue {
	return semconv.GenAIConversationID(o.mask(tenant, id))
}

func (o *Observability) turnAttrs(e engine.TurnEvent) []attribute.KeyValue {
	return []attribute.KeyValue{
		o.requestID(e.Tenant, e.RequestID), attribute.String("engine.tenant", e.Tenant),
		attribute.String("engine.environment", e.Environment), attribute.String("engine.turn_id", e.TurnID),
		attribute.String("engine.mode", string(e.Mode)), attribute.String("engine.locale", e.Locale),
	}
}

func (o *Observability) request(ctx context.Context, e engine.RequestEvent) {
	if e.Code != "" {
		o.problems.Add(ctx, 1, metric.WithAttributes(attribute.String("engine.code", e.Code), attribute.String("engine.route", e.Route)))
	}
}

// conversationKey is the context key of the turn's conversation id attribute, masked, for its
// chat spans.
type conversationKey struct{}

func (o *Observability) turnStart(ctx context.Context, e engine.TurnEvent) context.Context {
	// INTERNAL, as the conventions say of an agent that runs in the process.
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName(e.Tenant)),
		trace.WithAttributes(o.turnAttrs(e)...)}
	heard, ok := o.heard.take(e.RequestID)
	if ok {
		opts = append(opts, trace.WithTimestamp(heard.start)) // the turn began with its audio
	}
	ctx, span := o.tracer.Start(ctx, "invoke_agent "+e.Tenant, opts...)
	if ok {
		o.speechSpan(ctx, heard)
	}
	span.SetAttributes(o.model...)
	if e.ConversationID != "" {
		conv := o.conversationID(e.Tenant, e.ConversationID)
		span.SetAttributes(conv)
		ctx = context.WithValue(ctx, conversationKey{}, conv)
	}
	return ctx
}

func (o *Observability) firstSpeech(ctx context.Context, e engine.TurnEvent, elapsed time.Duration) {
	trace.SpanFromContext(ctx).AddEvent("first speak")
	o.firstSpeak.Record(ctx, elapsed.Seconds(), metric.WithAttributes(attribute.String("engine.tenant", e.Tenant), attribute.String("engine.mode", string(e.Mode))))
}

func (o *Observability) turnEnd(ctx context.Context, e engine.TurnEvent) {
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(attribute.Int("engine.steps", e.Steps), attribute.Int("engine.tool_calls", e.ToolCalls),
		attribute.Int("engine.widgets", e.Widgets))
	for _, pd := range e.PersonalData { // counts by kind and place: a bounded set of names
		span.SetAttributes(attribute.Int("engine.pii."+pd.Kind+"."+pd.Where, pd.N))
	}
	if e.ErrorCode != "" {
		span.SetStatus(codes.Error, e.ErrorCode)
		span.SetAttributes(attribute.String("engine.error", e.ErrorCode), semconv.ErrorTypeKey.String(e.ErrorCode))
		o.problems.Add(ctx, 1, metric.WithAttributes(attribute.String("engine.code", e.ErrorCode), attribute.String("engine.route", "turn")))
	}
	span.End()
	attrs := metric.WithAttributes(attribute.String("engine.tenant", e.Tenant), attribute.String("engine.mode", string(e.Mode)),
		attribute.String("engine.error", e.ErrorCode))
	o.turns.Add(ctx, 1, attrs)
	o.turnTime.Record(ctx, e.Duration.Seconds(), attrs)
}

func (o *Observability) toolStart(ctx context.Context, e engine.ToolEvent) context.Context {
	// A tool is a function the engine calls, actions too (gen_ai.tool.type "function"); the
	// call id is the model's, or the action's id.
	ctx, span := o.tracer.Start(ctx, "execute_tool "+e.Tool, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(e.Tool), semconv.GenAIToolType("function"),
		o.requestID(e.Tenant, e.RequestID), attribute.String("engine.tenant", e.Tenant),
		attribute.String("engine.environment", e.Environment), attribute.String("engine.tool", e.Tool),
		attribute.Bool("engine.action", e.Action)))
	if e.CallID != "" {
		span.SetAttributes(semconv.GenAIToolCallID(e.CallID))
	}
	return ctx
}

func (o *Observability) toolEnd(ctx context.Context, e engine.ToolEvent) {
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(attribute.String("engine.outcome", e.Outcome))
	if e.Outcome != "ok" && e.Outcome != "declined" {
		span.SetStatus(codes.Error, e.Outcome)
		span.SetAttributes(semconv.ErrorTypeKey.String(e.Outcome))
		o.toolErrors.Add(ctx, 1, metric.WithAttributes(attribute.String("engine.tool", e.Tool), attribute.String("engine.outcome", e.Outcome)))
	}
	span.End()
	o.toolTime.Record(ctx, e.Duration.Seconds(), metric.WithAttributes(attribute.String("engine.tenant", e.Tenant),
		attribute.String("engine.tool", e.Tool), attribute.String("engine.outcome", e.Outcome)))
}

// speechDone spans the synthesis or transcription that just ended: the hook runs after the
// work, so the span starts Duration ago, and lasts what the work did.
func (o *Observability) speechDone(ctx context.Context, e engine.SpeechEvent) {
	end := time.Now()
	h := heardAudio{e: e, start: end.Add(-e.Duration), end: end}
	if heldBeforeTheTurn(ctx, e) {
		for _, alone := range o.heard.hold(h) {
			o.speechSpan(ctx, alone)
		}
	} else {
		o.speechSpan(ctx, h)
	}
	o.speech.Record(ctx, e.Duration.Seconds(), metric.WithAttributes(attribute.String("engine.speech", e.Kind),
		attribute.String("engine.tenant", e.Tenant), attribute.Bool("engine.failed", e.Err)))
}

// speechSpan records the span of a synthesis or transcription that ran from h.start to h.end,
// a child of ctx's span.
func (o *Observability) speechSpan(ctx context.Context, h heardAudio) {
	e := h.e
	_, span := o.tracer.Start(ctx, e.Kind, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(h.start),
		trace.WithAttributes(attribute.String("engine.speech", e.Kind), attribute.String("engine.tenant", e.Tenant),
			o.requestID(e.Tenant, e.RequestID), attribute.String("engine.environment", e.Environment),
			attribute.Float64("engine.audio_seconds", e.AudioSeconds)))
	if e.Characters > 0 {
		span.SetAttributes(attribute.Int("engine.characters", e.Characters))
	}
	if e.Err {
		span.SetStatus(codes.Error, "failed")
		span.SetAttributes(semconv.ErrorTypeKey.String("error"))
	}
	span.End(trace.WithTimestamp(h.end))
}

// modelCall spans the call of the model that just ended, a child of the turn's span: the hook
// runs right after the call, so the span starts Duration ago. A warm-up belongs to no turn: its
// span is a trace of its own, marked engine.warmup.
func (o *Observability) modelCall(ctx context.Context, e engine.ModelCallEvent) {
	end := time.Now()
	attrs := make([]attribute.KeyValue, 0, 20)
	attrs = append(attrs, semconv.GenAIOperationNameChat)
	attrs = append(attrs, o.model...)
	attrs = append(attrs, attribute.String("engine.tenant", e.Tenant), attribute.String("engine.environment", e.Environment),
		attribute.Int("engine.step", e.Step), attribute.String("engine.outcome", e.Outcome), attribute.Int("engine.retries", e.Retries))
	if e.RequestID != "" { // a warm-up has neither
		attrs = append(attrs, o.requestID(e.Tenant, e.RequestID))
	}
	if e.TurnID != "" {
		attrs = append(attrs, attribute.String("engine.turn_id", e.TurnID))
	}
	if e.Model != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(e.Model))
	}
	if conv, ok := ctx.Value(conversationKey{}).(attribute.KeyValue); ok && !e.Warmup {
		attrs = append(attrs, conv)
	} else if e.SessionID != "" {
		attrs = append(attrs, o.conversationID(e.Tenant, e.SessionID))
	}
	start := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(end.Add(-e.Duration))}
	if e.Warmup {
		attrs = append(attrs, attribute.Bool("engine.warmup", true))
		start = append(start, trace.WithNewRoot())
	}
	if e.Finish != "" {
		attrs = append(attrs, semconv.GenAIResponseFinishReasons(string(e.Finish)))
	}
	if e.FirstOutput > 0 {
		attrs = append(attrs, semconv.GenAIResponseTimeToFirstChunk(e.FirstOutput.Seconds()))
	}
	if u := e.Usage; u.Reported {
		attrs = append(attrs, semconv.GenAIUsageInputTokens(u.InputTokens), semconv.GenAIUsageOutputTokens(u.OutputTokens),
			semconv.GenAIUsageCacheReadInputTokens(u.CachedTokens), semconv.GenAIUsageReasoningOutputTokens(u.ReasoningTokens))
	} else {
		attrs = append(attrs, attribute.Int("engine.usage.estimated_input_tokens", e.Estimated.InputTokens),
			attribute.Int("engine.usage.estimated_output_tokens", e.Estimated.OutputTokens))
	}
	failed := e.Outcome != "ok" && e.Outcome != ""
	if failed {
		attrs = append(attrs, semconv.ErrorTypeKey.String(e.Outcome))
	}
	_, span := o.tracer.Start(ctx, o.chat, append(start, trace.WithAttributes(attrs...))...)
	if failed {
		span.SetStatus(codes.Error, e.Outcome)
	}
	span.End(trace.WithTimestamp(end))

	if failed {
		attrs := append([]attribute.KeyValue{semconv.GenAIOperationNameChat, semconv.ErrorTypeKey.String(e.Outcome)}, o.model...)
		o.opTime.Record(ctx, e.Duration.Seconds(), metric.WithAttributes(attrs...))
	} else {
		o.opTime.Record(ctx, e.Duration.Seconds(), o.chatOK)
	}
	if e.Usage.Reported {
		o.tokens.Record(ctx, int64(e.Usage.InputTokens), o.chatInput)
		o.tokens.Record(ctx, int64(e.Usage.OutputTokens), o.chatOutput)
	}
}

func (o *Observability) socket(ctx context.Context, tenant string, open bool) {
	n := int64(1)
	if !open {
		n = -1
	}
	o.sockets.Add(ctx, n, metric.WithAttributes(attribute.String("engine.tenant", tenant)))
}

func (o *Observability) rateLimit(ctx context.Context, e engine.RateLimitEvent) {
	o.rateLimits.Add(ctx, 1, metric.WithAttributes(attribute.String("engine.tenant", e.Tenant),
		attribute.Bool("engine.limited", e.Limited), attribute.Bool("engine.unavailable", e.Unavailable)))
}

func (o *Observability) breaker(ctx context.Context, e engine.BreakerEvent) {
	attrs := []attribute.KeyValue{attribute.String("engine.breaker", e.Name), attribute.String("engine.breaker.state", e.State)}
	if e.Tenant != "" {
		attrs = append(attrs, attribute.String("engine.tenant", e.Tenant))
	}
	o.breakers.Add(ctx, 1, metric.WithAttributes(attrs...))
}

// Transport returns an http.RoundTripper that adds the W3C trace context (traceparent,
// tracestate) of each request's context before passing it to base (nil means a clone of
// http.DefaultTransport). Give it to the Toolsets' HTTP clients, so that tenant backends and
// MCP servers join the engine's traces.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	return &traceTransport{base: base, prop: propagation.TraceContext{}}
}

type traceTransport struct {
	base http.RoundTripper
	prop propagation.TextMapPropagator
}

func (t *traceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !trace.SpanContextFromContext(req.Context()).IsValid() {
		return t.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	t.prop.Inject(req.Context(), propagation.HeaderCarrier(req.Header))
	return t.base.RoundTrip(req)
}
