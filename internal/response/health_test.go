package response

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

type pinger struct {
	err   error
	calls int
}

func (p *pinger) Ping(context.Context) error { p.calls++; return p.err }

func TestHealth(t *testing.T) {
	ok, down := &pinger{}, &pinger{err: errors.New("refused")}
	for _, tc := range []struct {
		parts   map[string]any
		status  int
		failing []string
	}{
		{map[string]any{"sessions": ok, "replay": ok, "model": "no ping"}, http.StatusOK, nil},
		{map[string]any{"sessions": ok, "actions": down}, http.StatusServiceUnavailable, []string{"actions"}},
	} {
		ok.calls = 0
		var told []string
		w := httptest.NewRecorder()
		Health(w, httptest.NewRequest("GET", "/healthz", nil), tc.parts, func(_ context.Context, part string, _ error) { told = append(told, part) })
		var body struct {
			Status  string
			Failing []string
		}
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != tc.status || len(body.Failing) != len(tc.failing) ||
			len(told) != len(tc.failing) || w.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("%v: %d %s, told %v", tc.parts, w.Code, w.Body, told)
		}
		if ok.calls != 1 {
			t.Errorf("a part under two names was pinged %d times", ok.calls)
		}
	}
}
