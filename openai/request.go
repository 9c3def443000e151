package openai

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/convengine/engine"
)

// What the model is told about the kinds of tools, after each tool's own description.
const (
	actionNote = " (Action: calling this tool does not perform it. The user is shown a confirmation on their device and it runs only if they accept; say that they need to confirm, never that it is done.)"
	uiNote     = " (Display: adds to what the user sees with your spoken answer; keep figures here rather than reading them all out.)"
)

// params maps a model request to a Chat Completions request. The start of the prompt a provider
// caches, the tools and the first system message, depends only on req.Tools and req.System:
// tools are sorted by name and their schemas written with sorted keys, so the bytes are the
// same for the warm-up and every turn of a tenant.
func (m *Model) params(req *engine.ModelRequest) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		Model:    m.s.Model,
		Messages: m.messages(req),
		Tools:    tools(req.Tools),
	}
	p.StreamOptions.IncludeUsage = openai.Bool(true)
	if len(p.Tools) > 0 {
		p.ParallelToolCalls = openai.Bool(!m.s.SequentialToolCalls)
	}
	if key := CacheKey(req.Tenant, req.Environment); key != "" {
		p.PromptCacheKey = openai.String(key)
	}
	p = without(p, optional(m.refused.Load()))
	if m.s.Temperature != nil {
		p.Temperature = openai.Float(*m.s.Temperature)
	}
	// The lower of the two bounds: the tenant's (which a budget relies on) and this model's.
	limit := m.s.MaxOutputTokens
	if req.MaxOutputTokens > 0 && (limit == 0 || req.MaxOutputTokens < limit) {
		limit = req.MaxOutputTokens
	}
	if limit > 0 {
		p.MaxCompletionTokens = openai.Int(int64(limit))
	}
	return p
}

// CacheKey is the prompt_cache_key of a tenant's requests in one environment: a hash of the
// tenant's key and the environment, the same for the warm-up and every turn. It is empty
// without a tenant.
func CacheKey(t *engine.Tenant, environment string) string {
	if t == nil {
		return ""
	}
	sum := sha256.Sum256([]byte(t.Key + "\x00" + environment))
	return "engine-" + hex.EncodeToString(sum[:16])
}

func (m *Model) messages(req *engine.ModelRequest) []openai.ChatCompletionMessageParamUnion {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages)+2)
	system, context := req.System, req.Context
	if m.s.SingleSystemMessage && context != "" {
		system, context = joinPrompt(system, context), ""
	}
	if system != "" {
		out = append(out, openai.SystemMessage(system))
	}
	if context != "" {
		out = append(out, openai.SystemMessage(context))
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case engine.RoleUser:
			// Chat templates that require roles to alternate (Mistral's, Llama 2's) refuse
			// two user messages in a row, as the app's quoted data and the transcript are:
			// they travel as one message.
			if n := len(out); n > 0 && out[n-1].OfUser != nil && out[n-1].OfUser.Content.OfString.Valid() {
				prev := out[n-1].OfUser.Content.OfString.Value
				out[n-1] = openai.UserMessage(prev + "\n\n" + msg.Content)
				continue
			}
			out = append(out, openai.UserMessage(msg.Content))
		case engine.RoleAssistant:
			var a openai.ChatCompletionAssistantMessageParam
			if msg.Content != "" || len(msg.ToolCalls) == 0 {
				a.Content.OfString = openai.String(msg.Content)
			}
			for _, c := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: arguments(c.Arguments)},
					},
				})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case engine.RoleTool:
			out = append(out, openai.ToolMessage(toolContent(msg), msg.ToolCallID))
		}
	}
	return out
}

func joinPrompt(a, b string) string {
	if a == "" {
		return b
	}
	if a[len(a)-1] != '\n' {
		a += "\n"
	}
	return a + "\n" + b
}

func arguments(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}"
	}
	return string(raw)
}

// toolContent is what the model reads of a tool result. A failed call is marked in the content
// itself, since Chat Completions has no field for it.
func toolContent(msg engine.Message) string {
	content := msg.Content
	if content == "" {
		content = "null"
	}
	if !msg.IsError {
		return content
	}
	result := json.RawMessage(content)
	if !json.Valid(result) {
		result, _ = json.Marshal(content)
	}
	b, _ := json.Marshal(struct {
		IsError bool            `json:"is_error"`
		Result  json.RawMessage `json:"result"`
	}{true, result})
	return string(b)
}

// tools describes the tools as function tools, sorted by name.
func tools(specs []engine.ToolSpec) []openai.ChatCompletionToolUnionParam {
	sorted := slices.SortedFunc(slices.Values(specs), func(a, b engine.ToolSpec) int { return cmp.Compare(a.Name, b.Name) })
	out := make([]openai.ChatCompletionToolUnionParam, 0, len(sorted))
	for _, t := range sorted {
		desc := t.Description
		switch t.Kind {
		case engine.ToolAction:
			desc += actionNote
		case engine.ToolUI:
			desc += uiNote
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema(t.Parameters)}
		if desc != "" {
			fn.Description = openai.String(desc)
		}
		out = append(out, openai.ChatCompletionFunctionTool(fn))
	}
	return out
}

// schema reads a tool's JSON Schema. Its top-level keys are written sorted; below them the
// schema keeps the order and the numbers the tool was described with, without white space. A missing or
// non-object schema becomes the schema of an empty object.
func schema(raw json.RawMessage) shared.FunctionParameters {
	var top map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &top) != nil || top == nil {
		return shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
	}
	p := make(shared.FunctionParameters, len(top))
	for k, v := range top {
		var b bytes.Buffer
		json.Compact(&b, v) // v is valid: it was just decoded
		p[k] = json.RawMessage(b.Bytes())
	}
	return p
}
