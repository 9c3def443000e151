package httptools_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/httptools"
)

func TestBindArgumentsFromClientMetadata(t *testing.T) {
	var got struct {
		query string
		body  string
	}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.query, got.body = r.URL.RawQuery, string(b)
		w.Write([]byte(`{}`))
	}))
	defer backend.Close()
	tools := `[
	 {"name":"profile","method":"GET","path":"/profile","bind":{"user_id":"userId"},
	  "parameters":{"type":"object","properties":{"user_id":{"type":"string"},"fields":{"type":"string"}},"required":["user_id"]}},
	 {"name":"update","method":"POST","path":"/update","bind":{"user_id":"user.id","region":"user.region"},
	  "parameters":{"type":"object","properties":{"user_id":{"type":"string"},"region":{"type":"string"},"name":{"type":"string"}},"required":["user_id","name"]}}]`
	tn := &engine.Tenant{Key: "pk_b", Name: "B", Tools: json.RawMessage(tools),
		Environments: map[string]*engine.Environment{engine.EnvProduction: {BackendURL: backend.URL}}}
	if err := tn.Validate(); err != nil {
		t.Fatal(err)
	}
	ts := httptools.New(nil)
	env := &engine.ToolEnv{Tenant: tn, Environment: tn.Environments[engine.EnvProduction], UserToken: "u",
		Metadata: map[string]any{"userId": "u-42", "user": map[string]any{"id": "u-7", "region": "eu"}, "secret": "not-for-backends"}}

	listed, err := ts.Tools(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range listed {
		if strings.Contains(string(tool.Parameters), "user_id") || strings.Contains(string(tool.Parameters), "region") {
			t.Errorf("the model sees a bound argument: %s", tool.Parameters)
		}
	}
	if !strings.Contains(string(listed[1].Parameters), `"required":["name"]`) {
		t.Errorf("required not trimmed: %s", listed[1].Parameters)
	}

	// The model tries to choose the bound argument: the metadata wins.
	if _, err := ts.Call(t.Context(), env, engine.ToolCall{Name: "profile", Arguments: json.RawMessage(`{"user_id":"someone-else","fields":"all"}`)}); err != nil {
		t.Fatal(err)
	}
	if got.query != "fields=all&user_id=u-42" {
		t.Errorf("query %q", got.query)
	}
	if _, err := ts.Call(t.Context(), env, engine.ToolCall{Name: "update", Arguments: json.RawMessage(`{"name":"Sam"}`)}); err != nil {
		t.Fatal(err)
	}
	if got.body != `{"name":"Sam","region":"eu","user_id":"u-7"}` || strings.Contains(got.body, "not-for-backends") {
		t.Errorf("body %s", got.body)
	}

	env.Metadata = nil
	_, err = ts.Call(t.Context(), env, engine.ToolCall{Name: "profile", Arguments: json.RawMessage(`{}`)})
	if !errors.Is(err, httptools.ErrMissingMetadata) {
		t.Errorf("without metadata: %v", err)
	}

	_, err = httptools.Parse(json.RawMessage(`[{"name":"x","method":"GET","path":"/x","bind":{"a b":"c","d":"e..f"}}]`))
	if err == nil || !strings.Contains(err.Error(), `tools[0].bind: "a b"`) || !strings.Contains(err.Error(), "tools[0].bind.d") {
		t.Errorf("parse: %v", err)
	}
}
