package openai_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/convengine/engine"
	"github.com/convengine/engine/openai"
)

// A stand-in for the API: two chunks of a streamed completion.
const streamed = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" there."},"finish_reason":"stop"}]}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":3,"total_tokens":1203,"prompt_tokens_details":{"cached_tokens":1152}}}

data: [DONE]

`

func Example() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, streamed)
	}))
	defer api.Close()

	m, err := openai.NewModel(&openai.Options{
		BaseURL: api.URL + "/v1", // omit for OpenAI itself
		APIKey:  engine.Secret("sk-..."),
		Model:   "gpt-4o-mini",
	})
	if err != nil {
		log.Fatal(err)
	}
	req := &engine.ModelRequest{
		System:   "You are a bank's assistant.",
		Messages: []engine.Message{{Role: engine.RoleUser, Content: "hi"}},
	}
	for ev, err := range m.Stream(context.Background(), req) {
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Kind {
		case engine.EventText:
			fmt.Printf("%q\n", ev.Text)
		case engine.EventFinish:
			fmt.Println(ev.Finish, ev.Usage.InputTokens, "tokens in,", ev.Usage.CachedTokens, "cached")
		}
	}
	// Output:
	// "Hello"
	// " there."
	// stop 1200 tokens in, 1152 cached
}

// A compatible server is reached through its base URL. The engine gets the model in its Config;
// OpenAI's speech endpoints can serve text-to-speech and audio input.
func ExampleNewModel_compatibleServer() {
	ollama, err := openai.NewModel(&openai.Options{
		BaseURL: "http://localhost:11434/v1/",
		Model:   "llama3.1",
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = engine.Config{Model: ollama /* Tenants, Toolset, SigningKey… */}
}

func ExampleNewSynthesizer() {
	speech := &openai.Options{APIKey: engine.Secret("sk-..."), Voice: "coral"}
	synth, err := openai.NewSynthesizer(speech)
	if err != nil {
		log.Fatal(err)
	}
	listen, err := openai.NewTranscriber(speech)
	if err != nil {
		log.Fatal(err)
	}
	_ = engine.Config{Synthesizer: synth, Transcriber: listen /* Tenants, Model, SigningKey… */}
}
