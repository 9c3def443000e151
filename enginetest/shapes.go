package enginetest

import "fmt"

// A ServerShape is a way OpenAI-compatible servers are known to stream a completion that differs
// from OpenAI's documented format, kept as replay fixtures of [OpenAIFixtures] for the demo
// bank's balance conversation: shape_<Name>_1 answers the turn's first completion (a call of
// get_balance), shape_<Name>_2 the one after the tool result (the balance sentence, show_stat
// and set_suggestions). Each is written as the server was reported to send it.
type ServerShape struct {
	Name string
	// Servers are the servers known to send it, and Source where it was reported.
	Servers string
	Source  string
	// Fails is set when the server really failed: the right answer is the engine's model
	// error, not the balance.
	Fails bool
}

// ServerShapes returns the shapes of [OpenAIFixtures], in the order of docs/models.md.
func ServerShapes() []ServerShape { return append([]ServerShape(nil), serverShapes...) }

// ShapeRoute routes the balance conversation to the fixtures of shape: shape_<name>_1 for the
// first completion of a turn, shape_<name>_2 once the tool results are in, "warm" for a warm-up.
// A shape that fails answers shape_<name>_1 to every completion.
func ShapeRoute(shape ServerShape) func(*ReplayRequest) string {
	return func(r *ReplayRequest) string {
		switch {
		case r.MaxCompletionTokens == 1:
			return "warm"
		case shape.Fails || r.Step == 0:
			return fmt.Sprintf("shape_%s_1", shape.Name)
		}
		return fmt.Sprintf("shape_%s_2", shape.Name)
	}
}

var serverShapes = []ServerShape{
	// The envelope and the framing.
	{Name: "llamacpp_ids", Servers: "llama.cpp before b2390", Source: "ggml-org/llama.cpp#5876, #5880: a new chunk id, and a moving created, in every chunk"},
	{Name: "litellm_ids", Servers: "LiteLLM proxy", Source: `BerriAI/litellm#1571, #14429: a new id per chunk, "role": null, "usage": {}`},
	{Name: "foundry_local", Servers: "Microsoft Foundry Local", Source: `microsoft/foundry-local#144, #221, #273: "chat.id.N" and choices[].index counting up, delta and message both, "error": null`},
	{Name: "azure", Servers: "Azure OpenAI", Source: `Azure's content-filter docs; microsoft/autogen#6465, aaif-goose/goose#8641: a first chunk with "choices": [], annotation chunks with an empty id and no delta after the finish`},
	{Name: "openrouter", Servers: "OpenRouter", Source: `leafo/lua-openai#7, speakeasy-api/gram#921: ": OPENROUTER PROCESSING" comments, "reasoning" deltas, the usage after the finish`},
	{Name: "vertex_keepalive", Servers: "Vertex AI partner models", Source: `anomalyco/opencode#50871: "data: : keepalive" events`},
	{Name: "agentrouter", Servers: "AgentRouter", Source: `Kilo-Org/kilocode#3083: "data: null", events ended by one line feed`},
	{Name: "crlf_pings", Servers: "llama-cpp-python before 0.2.38 (sse-starlette)", Source: `abetlen/llama-cpp-python#1188, tmc/langchaingo#631: CRLF line ends, ": ping - <time>" comments`},
	{Name: "tgi", Servers: "Text Generation Inference 2.0", Source: `huggingface/text-generation-inference#2019: "data:" without a space, an empty id`},
	{Name: "gateway_ids", Servers: "LLM gateways", Source: `theopenco/llmgateway#2334, openai/openai-python#2722: "retry:", "id:" and "event: message" lines, comment pings`},
	{Name: "multiline_data", Servers: "sse-starlette servers streaming indented JSON", Source: "sysid/sse-starlette's encoder; SamSaffron/term-llm#454: one chunk over several data lines"},
	{Name: "named_events", Servers: "Hermes Agent", Source: `NousResearch/hermes-agent#7014: "event: hermes.tool.progress" events whose data are not chunks`},
	// Tool calls.
	{Name: "ollama_no_index", Servers: "Ollama 0.4.6 to 0.4.7", Source: `ollama/ollama#7881, #7963, #5796: whole calls without an index, the answer in one delta, finish_reason "stop"`},
	{Name: "ollama_index_zero", Servers: "Ollama 0.23", Source: `ollama/ollama#15457, #16212: parallel calls all at index 0 with ids of their own, finish_reason "stop"`},
	{Name: "vllm_no_id", Servers: "vLLM with a named tool_choice", Source: `vllm-project/vllm#18412: no id, no type, the name in every delta, finish_reason "stop"`},
	{Name: "vllm_resend", Servers: "vLLM 0.19 with MTP", Source: `vllm-project/vllm#42167: the arguments again whole with the finish, id, type and name null`},
	{Name: "glm_index_minus_one", Servers: "Zhipu's GLM API", Source: "zai-org/GLM-4.5#17: a whole call at index -1 with object arguments, in the finishing chunk"},
	{Name: "litellm_bedrock", Servers: "LiteLLM in front of Bedrock's Claude", Source: `BerriAI/litellm#11407, #5231: tool indexes from 1, the id only on the first piece, no finish_reason`},
	{Name: "litellm_choice_index", Servers: "LiteLLM in front of Anthropic with reasoning", Source: "BerriAI/litellm#12666, #18535: the answer and the tool calls on choices[].index 1 and 2"},
	{Name: "oci_ids", Servers: "OCI through LiteLLM", Source: `BerriAI/litellm#40040: a new tool-call id with every piece, "name": "" after the first, finish_reason "stop" on a piece`},
	{Name: "llamacpp_names", Servers: "llama.cpp before #13800", Source: "ggml-org/llama.cpp#13774, #13800: the whole name in every delta, the id inside function"},
	{Name: "no_finish", Servers: "NVIDIA NIM for GLM-5.1, vLLM 0.10", Source: "earendil-works/pi#6225, vllm-project/vllm#27572: no finish reason and no [DONE]; the connection closes"},
	{Name: "end_turn", Servers: "LiteLLM with an unmapped provider", Source: `BerriAI/litellm#12481: finish_reason "end_turn" after tool calls`},
	// The answer's shape.
	{Name: "plain_json", Servers: "SGLang 0.4 with tools, LocalAI before 2.9", Source: `sgl-project/sglang#2810, mudler/LocalAI#1187: stream: true answered with one JSON completion`},
	{Name: "deepseek_reasoning", Servers: "DeepSeek (deepseek-reasoner)", Source: "neuron-core/neuron-ai#411: reasoning_content deltas while content is null"},
	{Name: "vllm_reasoning", Servers: "vLLM 0.19 with --reasoning-parser", Source: `vllm-project/vllm#27752, #43933: "reasoning" deltas, reasoning and content in one delta`},
	{Name: "think_tags", Servers: "llama.cpp with --reasoning-format none, LM Studio", Source: "ggml-org/llama.cpp#11607, #12379: <think>…</think> inside content, its tags cut across deltas"},
	{Name: "hermes_text", Servers: "Ollama 0.3, vLLM with the wrong --tool-call-parser", Source: `ollama/ollama#5915, vllm-project/vllm#17161: <tool_call> JSON written as text, "\u003c" escapes, finish_reason "stop"`},
	{Name: "groq_usage", Servers: "Groq", Source: "vercel/ai#1651: the usage only under x_groq, whole tool calls in one delta"},
	{Name: "cumulative_usage", Servers: "vLLM with continuous_usage_stats", Source: "vllm-project/vllm#6652, #9357: a running total of usage on every chunk"},
	// Failures the engine answers with its model error.
	{Name: "sglang_context_error", Servers: "SGLang before #21900", Source: `sgl-project/sglang#12081, #19996: a context-length error as a data event of a 200 stream`, Fails: true},
	{Name: "llamacpp_error_field", Servers: "llama.cpp before #16109", Source: `ggml-org/llama.cpp#16104, #16109: an "error:" field instead of data`, Fails: true},
	{Name: "stream_server_error", Servers: "kronk", Source: `ardanlabs/kronk#862: a server error in a 200 stream, its code a string`, Fails: true},
	{Name: "error_string", Servers: "Ollama's native API, proxies", Source: `ollama/ollama server/routes.go: 404 {"error": "<text>"}`, Fails: true},
	{Name: "fastapi_detail", Servers: "FastAPI proxies in front of vLLM", Source: `vllm-project/vllm#34340: 400 {"detail": "<text>"}`, Fails: true},
	{Name: "vllm_object_error", Servers: "vLLM before ErrorInfo, SGLang", Source: `vllm-project/vllm#17792: 400 {"object": "error", …, "code": 400}`, Fails: true},
	{Name: "nginx_502", Servers: "nginx in front of a server", Source: "nginx's error page: 502 with HTML", Fails: true},
}
