package openai

import (
	"errors"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
)

// The request members the engine sends that the API defines but some compatible servers
// refuse, with a 400 or a 422 that names them: Mistral's API answers 422 "extra_forbidden" at
// body.stream_options.include_usage, Azure OpenAI and the gateways in front of it 400 "Unknown
// parameter: 'stream_options'" or "Unrecognized request argument supplied: prompt_cache_key";
// Text Generation Inference, LocalAI and KoboldCPP refuse unknown fields too. A member a server
// refused once is left out of the Model's requests from then on, and the request is sent again
// at once without it.
const (
	streamOptions optional = 1 << iota
	promptCacheKey
	parallelToolCalls
)

// optional is a set of optional request members.
type optional uint32

var optionalNames = []struct {
	member optional
	name   string
}{{streamOptions, "stream_options"}, {promptCacheKey, "prompt_cache_key"}, {parallelToolCalls, "parallel_tool_calls"}}

// sent returns the optional members p holds.
func sent(p *openai.ChatCompletionNewParams) optional {
	var m optional
	if p.StreamOptions.IncludeUsage.Valid() {
		m |= streamOptions
	}
	if p.PromptCacheKey.Valid() {
		m |= promptCacheKey
	}
	if p.ParallelToolCalls.Valid() {
		m |= parallelToolCalls
	}
	return m
}

// without returns p without the members of m.
func without(p openai.ChatCompletionNewParams, m optional) openai.ChatCompletionNewParams {
	if m&streamOptions != 0 {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
	}
	if m&promptCacheKey != 0 {
		p.PromptCacheKey = openai.ChatCompletionNewParams{}.PromptCacheKey
	}
	if m&parallelToolCalls != 0 {
		p.ParallelToolCalls = openai.ChatCompletionNewParams{}.ParallelToolCalls
	}
	return p
}

// refusedBy returns the optional members of p that err, a server's answer, says it refuses.
func refusedBy(err error, p *openai.ChatCompletionNewParams) optional {
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest && ae.StatusCode != http.StatusUnprocessableEntity {
		return 0
	}
	said := ae.Message + " " + ae.Code + " " + ae.Type + " " + ae.Param
	var m optional
	for _, o := range optionalNames {
		if sent(p)&o.member != 0 && strings.Contains(said, o.name) {
			m |= o.member
		}
	}
	return m
}
