package openai

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/convengine/engine"
)

// maxTokens bounds each figure of a usage report: more tokens in one completion cannot be
// right, and a figure that large would ruin a tenant's totals.
const maxTokens = 10_000_000

// readUsage reads a chunk's usage report. ok is false when the chunk reports nothing: no usage,
// null, {}, no token counts, or counts that are all zero (servers that have none to give send
// zeros; a real completion always has a prompt). A report whose figures cannot be right
// (negative, above maxTokens, not numbers) is a report, ok, of nothing: Reported is false.
func readUsage(raw json.RawMessage) (u engine.Usage, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return u, false
	}
	var r struct {
		PromptTokens            json.RawMessage `json:"prompt_tokens"`
		CompletionTokens        json.RawMessage `json:"completion_tokens"`
		PromptTokensDetails     json.RawMessage `json:"prompt_tokens_details"`
		CompletionTokensDetails json.RawMessage `json:"completion_tokens_details"`
	}
	var prompt, completion struct {
		CachedTokens    json.RawMessage `json:"cached_tokens"`
		ReasoningTokens json.RawMessage `json:"reasoning_tokens"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return u, true // not an object
	}
	if isNull(r.PromptTokens) && isNull(r.CompletionTokens) {
		return u, false
	}
	if !isNull(r.PromptTokensDetails) && json.Unmarshal(r.PromptTokensDetails, &prompt) != nil ||
		!isNull(r.CompletionTokensDetails) && json.Unmarshal(r.CompletionTokensDetails, &completion) != nil {
		return u, true
	}
	valid := true
	count := func(raw json.RawMessage) int {
		n, ok := tokenCount(raw)
		valid = valid && ok
		return n
	}
	u = engine.Usage{
		InputTokens:     count(r.PromptTokens),
		OutputTokens:    count(r.CompletionTokens),
		CachedTokens:    count(prompt.CachedTokens),
		ReasoningTokens: count(completion.ReasoningTokens),
	}
	switch {
	case !valid:
		return engine.Usage{}, true
	case u.InputTokens == 0 && u.OutputTokens == 0:
		return engine.Usage{}, false
	}
	u.Reported = true
	return u, true
}

// groqUsage is the usage Groq reports under x_groq; nil when there is none.
func groqUsage(raw json.RawMessage) json.RawMessage {
	var x struct {
		Usage json.RawMessage `json:"usage"`
	}
	if isNull(raw) || json.Unmarshal(raw, &x) != nil {
		return nil
	}
	return x.Usage
}

// tokenCount reads one figure of a report: absent or null is zero; anything but a whole JSON
// number from 0 to maxTokens is not a count.
func tokenCount(raw json.RawMessage) (int, bool) {
	if isNull(raw) {
		return 0, true
	}
	if c := raw[0]; c != '-' && (c < '0' || c > '9') {
		return 0, false // a string ("12" too), a boolean, an object
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f < 0 || f > maxTokens || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}
