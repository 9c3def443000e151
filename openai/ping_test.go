package openai_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/openai"
)

func TestPing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models/gpt-4o-mini":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"gpt-4o-mini","object":"model","created":1,"owned_by":"openai"}`))
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":{"message":"no such model","type":"invalid_request_error","code":"model_not_found"}}`))
		}
	}))
	defer srv.Close()
	ok, err := openai.NewModel(&openai.Options{BaseURL: srv.URL + "/v1", APIKey: engine.Secret("sk-ping-secret"), Model: "gpt-4o-mini"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ok.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	missing, _ := openai.NewModel(&openai.Options{BaseURL: srv.URL + "/v1", APIKey: engine.Secret("sk-ping-secret"), Model: "nope"})
	err = missing.Ping(t.Context())
	if err == nil || strings.Contains(err.Error(), "sk-ping-secret") {
		t.Fatalf("err = %v", err)
	}
}
