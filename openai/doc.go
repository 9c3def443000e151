// Package openai connects the engine to OpenAI's API, or to any server that speaks it (Ollama,
// vLLM, llama.cpp's server, Groq, Azure OpenAI): a [Model] over Chat Completions, a
// [Synthesizer] over the speech endpoint and a [Transcriber] over the transcriptions endpoint.
// It is built on the official SDK, github.com/openai/openai-go/v3. The examples are the best
// way in.
//
// # Configuration
//
// Everything is passed in [Options]; nothing is read from the environment, although the SDK
// would read OPENAI_API_KEY and OPENAI_BASE_URL by itself: the services are built without it.
// The reference server, cmd/engine, reads those variables and passes them in.
//
// # What the model sees
//
// [Model.Stream] sends the request's System prompt as the first system message and its Context
// (locale, mode, screen, client metadata) as a second one, then the conversation: user and
// assistant messages, the assistant's tool calls, and the tool results by tool_call_id (a failed
// call's result is wrapped as {"is_error":true,"result":…}). Tools are function tools sorted by
// name. A UI tool's description says that it adds to what the user sees; an action tool's says
// that calling it only proposes the action, which runs once the user confirms it on their
// device. parallel_tool_calls is on unless [Options].SequentialToolCalls is set;
// stream_options.include_usage is on. A server that refuses one of stream_options,
// prompt_cache_key or parallel_tool_calls (a 400 or 422 naming it, as Mistral's API and Azure
// OpenAI answer) gets the request again at once without it, and the Model leaves it out from
// then on. The finish event's [engine.Usage] is what the
// server reported, wherever it put it (the last chunk, after the finish, x_groq, a running
// total, a whole JSON completion): the last report counts, and one that cannot be right is
// dropped, leaving Reported false.
//
// # Streaming, errors and retries
//
// The SDK builds and sends each request; the answer is read by this package, because the servers
// that speak the API stream in more shapes than the SDK accepts: chunk ids that change, choices
// numbered other than 0, keep-alive events, tool calls whole or in pieces with or without index
// or id, arguments as objects, reasoning in its own field or between <think> tags, tool calls
// written as text, a plain JSON completion instead of a stream (docs/models.md has the list).
// Text deltas are yielded as they arrive, without the reasoning; tool calls are assembled and
// yielded when the answer ends, then a finish event with the reason and the usage (cached tokens
// included). A refusal or a content-filter stop finishes with [engine.FinishRefused], which the
// engine speaks as a short, polite line.
//
// A request that fails before its first token (429 or 5xx whatever the body, a server's error
// inside its stream, a broken connection, a stream cut before any text, no answer within
// [Options].RequestTimeout) is retried with exponential backoff or after the server's
// Retry-After, never past the context's deadline; other client errors are not. Once text was
// yielded, a failure is the sequence's last value and the engine turns it into the turn's error
// event. A stream that cannot be read ([ErrBadStream]) or tool calls that cannot be run
// ([ErrBadToolCall]) end the completion with an error. Cancelling the context, or leaving the
// range early, closes the HTTP stream at once. Status errors are [*APIError] values and errors
// inside a stream [*StreamError] values; no error includes the API key or the server's message.
//
// # Prompt caching
//
// The prefix a provider caches is the tools and the first system message. Both are written the
// same way, byte for byte, for every request of a tenant: tools sorted by name, schemas with
// sorted top-level keys, and the per-turn facts kept out of the system prompt. Every request
// carries the prompt_cache_key of [CacheKey], and [Model.Warm] (an [engine.Warmer]) sends that
// prefix at session creation asking for a single token, so that the first turn hits the cache.
package openai
