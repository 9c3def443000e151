package openai_test

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
	"github.com/convengine/engine/openai"
)

// Answers of servers that refuse a member of the request, as their users reported them.
const (
	// Mistral's API (openai/openai-agents-python#442): 422, FastAPI's "extra_forbidden".
	mistralRefusesStreamOptions = "HTTP/1.1 422 Unprocessable Entity\r\nContent-Type: application/json\r\n\r\n" +
		`{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","stream_options","include_usage"],"msg":"Extra inputs are not permitted","input":true}]},"type":"invalid_request_error","param":null,"code":null}`
	// A gateway in front of Azure OpenAI (QuantumNous/new-api#418): 400 unknown_parameter.
	gatewayRefusesStreamOptions = "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n\r\n" +
		`{"error":{"message":"Unknown parameter: 'stream_options'. (request id: 20240806214436917505976hvsFC5y2)","type":"invalid_request_error","param":"stream_options","code":"unknown_parameter"}}`
	// Azure OpenAI's wording for a member it does not know.
	azureRefusesCacheKey = "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n\r\n" +
		`{"error":{"message":"Unrecognized request argument supplied: prompt_cache_key","type":"invalid_request_error","param":null,"code":null}}`
	// A 400 about something else.
	badMessages = "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n\r\n" +
		`{"error":{"message":"Invalid value for 'messages[1].role'.","type":"invalid_request_error","param":"messages","code":"invalid_value"}}`
)

// refusingServer answers as refusal says while the request holds one of members, and with
// OpenAI's recorded text completion once it holds none.
func refusingServer(t *testing.T, refusal string, members ...string) *enginetest.ReplayServer {
	t.Helper()
	text, err := fs.ReadFile(enginetest.OpenAIFixtures(), "text.http")
	if err != nil {
		t.Fatal(err)
	}
	fixtures := fstest.MapFS{"text.http": {Data: text}, "refusal.http": {Data: []byte(refusal)}}
	return enginetest.NewReplayServer(t, fixtures, func(r *enginetest.ReplayRequest) string {
		for _, m := range members {
			if strings.Contains(string(r.Body), `"`+m+`"`) {
				return "refusal"
			}
		}
		return "text"
	})
}

// TestRefusedMembersAreLeftOut: a server that refuses stream_options or prompt_cache_key, in the
// words real servers use, gets the request again at once without it, and the model's later
// requests never hold it; the completion answers, its finish counting the refused request.
func TestRefusedMembersAreLeftOut(t *testing.T) {
	req := &engine.ModelRequest{Tenant: &engine.Tenant{Key: "pk_x"}, Environment: "production",
		Messages: []engine.Message{{Role: engine.RoleUser, Content: "hello"}}}
	for _, tc := range []struct {
		name, refusal, member string
	}{
		{"mistral 422", mistralRefusesStreamOptions, "stream_options"},
		{"gateway 400", gatewayRefusesStreamOptions, "stream_options"},
		{"azure 400", azureRefusesCacheKey, "prompt_cache_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := refusingServer(t, tc.refusal, tc.member)
			m := newModel(t, srv.URL, &openai.Options{MaxRetries: -1}) // no retries: the re-send is not one
			first := collect(m.Stream(t.Context(), req))
			if first.err != nil || first.text == "" || first.finish == nil || first.finish.Retries != 1 {
				t.Fatalf("first completion: %+v", first)
			}
			second := collect(m.Stream(t.Context(), req))
			if second.err != nil || second.finish == nil || second.finish.Retries != 0 {
				t.Fatalf("second completion: %+v", second)
			}
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3", len(reqs))
			}
			for i, r := range reqs {
				if has := strings.Contains(string(r.Body), `"`+tc.member+`"`); has != (i == 0) {
					t.Errorf("request %d holds %s: %v", i+1, tc.member, has)
				}
			}
			if !strings.Contains(string(reqs[1].Body), `"messages"`) {
				t.Errorf("the request sent again lost its messages: %s", reqs[1].Body)
			}
		})
	}
}

// TestRefusalOfEverything: a server that refuses each optional member in turn gets the request
// once with each fewer, never more; one that refuses something else gets it once.
func TestRefusalOfEverything(t *testing.T) {
	req := &engine.ModelRequest{Tenant: &engine.Tenant{Key: "pk_x"}, Environment: "production",
		Messages: []engine.Message{{Role: engine.RoleUser, Content: "hello"}},
		Tools:    []engine.ToolSpec{{Name: "get_balance", Parameters: []byte(`{"type":"object"}`)}}}
	refuseAll := "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n\r\n" +
		`{"error":{"message":"Unrecognized request arguments supplied: stream_options, prompt_cache_key, parallel_tool_calls","type":"invalid_request_error"}}`
	srv := refusingServer(t, refuseAll, "stream_options", "prompt_cache_key", "parallel_tool_calls")
	m := newModel(t, srv.URL, &openai.Options{MaxRetries: -1})
	if r := collect(m.Stream(t.Context(), req)); r.err != nil || r.finish == nil || r.finish.Retries != 1 {
		t.Fatalf("%+v", r)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (all three members refused at once)", n)
	}

	other := refusingServer(t, badMessages, "messages")
	m = newModel(t, other.URL, nil)
	r := collect(m.Stream(t.Context(), req))
	if r.err == nil || len(other.Requests()) != 1 {
		t.Errorf("a 400 about the messages: %v after %d requests", r.err, len(other.Requests()))
	}
}
