package usage

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// maxModelLabels bounds the values of the model label per tenant; past it, "other".
const maxModelLabels = 32

// counters are the meter's Prometheus counters. Only the meter's writer counts in them, so that
// its map of model labels needs no lock.
type counters struct {
	tokens, modelCalls, toolCalls, speechSeconds, speechChars *prometheus.CounterVec
	dropped, failures                                         prometheus.Counter
	models                                                    map[string]map[string]bool // per tenant, the model labels given
}

func newCounters(reg prometheus.Registerer) (*counters, error) {
	c := &counters{
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "engine_usage_tokens_total",
			Help: "Tokens of the calls of the model, by tenant, model (at most 32 per tenant, then other), type (input, cached_input, output, reasoning) and whether the engine estimated them because the server reported none."},
			[]string{"tenant", "model", "type", "estimated"}),
		modelCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "engine_usage_model_calls_total",
			Help: "Calls of the model, warm-ups included, by tenant and outcome (ok, cancelled, timeout, error)."},
			[]string{"tenant", "outcome"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "engine_usage_tool_calls_total",
			Help: "Tool calls and actions, by tenant and outcome (ok, declined, unavailable, timeout, cancelled)."},
			[]string{"tenant", "outcome"}),
		speechSeconds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "engine_usage_speech_seconds_total",
			Help: "Seconds of audio transcribed (kind transcription) or synthesized and read (kind synthesis), by tenant and speech provider."},
			[]string{"tenant", "kind", "provider"}),
		speechChars: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "engine_usage_speech_characters_total",
			Help: "Characters of the texts synthesized, by tenant and speech provider."}, []string{"tenant", "provider"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "engine_usage_dropped_records_total",
			Help: "Usage records dropped because the meter's buffer was full (its sink failing or slow), or the meter closed."}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "engine_usage_sink_failures_total",
			Help: "Writes of a batch of usage records that failed, each to be tried again."}),
		models: map[string]map[string]bool{},
	}
	if reg != nil {
		for _, col := range []prometheus.Collector{c.tokens, c.modelCalls, c.toolCalls, c.speechSeconds, c.speechChars, c.dropped, c.failures} {
			if err := reg.Register(col); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// model returns the model label of tenant's model name.
func (c *counters) model(tenant, name string) string {
	seen := c.models[tenant]
	if seen[name] {
		return name
	}
	if seen == nil {
		seen = map[string]bool{}
		c.models[tenant] = seen
	}
	if len(seen) >= maxModelLabels {
		return OtherModel
	}
	seen[name] = true
	return name
}

func (c *counters) count(r *Record) {
	switch r.Kind {
	case KindModel:
		c.modelCalls.WithLabelValues(r.Tenant, r.Outcome).Inc()
		model, est := c.model(r.Tenant, r.Model), strconv.FormatBool(r.Estimated)
		for _, t := range [...]struct {
			typ string
			n   int64
		}{{"input", r.InputTokens}, {"cached_input", r.CachedInputTokens}, {"output", r.OutputTokens}, {"reasoning", r.ReasoningTokens}} {
			if t.n > 0 {
				c.tokens.WithLabelValues(r.Tenant, model, t.typ, est).Add(float64(t.n))
			}
		}
	case KindTool:
		c.toolCalls.WithLabelValues(r.Tenant, r.Outcome).Inc()
	case KindTranscription, KindSynthesis:
		if r.AudioSeconds > 0 {
			c.speechSeconds.WithLabelValues(r.Tenant, r.Kind, r.Provider).Add(r.AudioSeconds)
		}
		if r.Characters > 0 {
			c.speechChars.WithLabelValues(r.Tenant, r.Provider).Add(float64(r.Characters))
		}
	}
}
