// Command engine is the reference server of the conversational engine.
//
// With no configuration it serves an offline demo tenant under the engine key pk_demo: the
// intent model answers, and a demo bank backend runs in the same process. A tenants file
// (-tenants or ENGINE_TENANTS) replaces the demo.
//
// Flags and their environment variables:
//
//	-addr        ENGINE_ADDR         listen address (default 127.0.0.1:8080)
//	-tenants     ENGINE_TENANTS      tenants file, YAML or JSON
//	-public-url  ENGINE_PUBLIC_URL   the engine's public base URL
//	-log-level   ENGINE_LOG_LEVEL    debug, info, warn or error (default info)
//	-records     ENGINE_RECORDS      the conversation record: sqlite:PATH, a postgres:// URL, or
//	                                 off (default: a SQLite file in the user's data directory)
//	-speech      ENGINE_SPEECH       auto (default): speak with espeak-ng and listen with
//	                                 pocketsphinx when they are installed; off: no speech
//	-sip         ENGINE_SIP_ADDR     answer the tenants' numbers over SIP (UDP and TCP) on this
//	                                 address; -sip-rtp-ports (ENGINE_SIP_RTP_PORTS) their RTP
//	                                 ports, -sip-external-ip (ENGINE_SIP_EXTERNAL_IP) the
//	                                 address behind NAT (docs/telephony.md)
//	             ENGINE_SIGNING_KEY  base64 of at least 32 random bytes that sign session and
//	                                 action tokens; generated at start when absent
//
// The model is the offline intent model unless OPENAI_API_KEY or OPENAI_BASE_URL is set; then
// it is OpenAI's, or that of the compatible server at OPENAI_BASE_URL (Ollama, vLLM, llama.cpp
// server, Groq, Azure OpenAI; see docs/models.md):
//
//	OPENAI_API_KEY      the API key (any value for a local server that needs none)
//	OPENAI_BASE_URL     the base URL of a compatible server (default https://api.openai.com/v1/)
//	ENGINE_MODEL        the chat model (default gpt-4o-mini)
//	OPENAI_ORG_ID       the organization, OPENAI_PROJECT_ID the project, when needed
//
// With OpenAI itself (no OPENAI_BASE_URL), its speech and transcription endpoints also serve
// text-to-speech and audio input.
//
// A tenant of the tenants file may name its own model with "model": "intent" for the offline
// intent model, or a model of the file's "models" section (an OpenAI-compatible server);
// tenants without one get the model above (see docs/models.md).
//
// With OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set, each turn's trace
// (the GenAI semantic conventions' invoke_agent, chat and execute_tool spans) is exported over
// OTLP/HTTP with protobuf, and with OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_METRICS_ENDPOINT the metrics too; the other standard OTEL_* variables apply
// (see docs/usage.md).
//
// "engine records COMMAND" exports, verifies, erases and holds the conversation record
// (-records / ENGINE_RECORDS: sqlite:PATH, a postgres:// URL, or off; by default a SQLite file
// in the user's data directory): see docs/records.md.
//
// "engine test [flags] PATH..." runs conversation scenarios against the same tenants, model,
// tools and speech, in-process, and exits 1 when one fails, 2 on bad input, 3 when SIGINT or
// SIGTERM interrupted it (see docs/testing-tenants.md).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "records" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := recordsCommand(ctx, os.Args[2:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	if len(os.Args) > 1 && os.Args[1] == "test" {
		st, err := os.Stdout.Stat()
		terminal := err == nil && st.Mode()&os.ModeCharDevice != 0
		os.Exit(testCommand(os.Args[2:], os.Getenv, os.Stdout, os.Stderr, terminal))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "engine:", err)
		os.Exit(1)
	}
}
