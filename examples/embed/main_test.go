package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestEmbeddedEngine(t *testing.T) {
	h, err := newHandler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "the host's home page\n" {
		t.Fatalf("host route: %q", body)
	}

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/assistant/engine", strings.NewReader(`{"transcript":"where is my order"}`))
	req.Header.Set("X-Engine-Key", "pk_shop")
	req.Header.Set("X-Token", "u1")
	req.Header.Set("X-Request-ID", "prod-1")
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`"text":"Looking up your order"`, `"speak":"Your order A-1042 is out for delivery."`, `{"type":"stat","label":"Arriving","value":"today, 14:00-16:00"}`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the turn lacks %s:\n%s", want, body)
		}
	}
}
