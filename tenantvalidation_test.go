package engine_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/convengine/engine"
	"github.com/convengine/engine/enginetest"
)

// forgetfulStore is a custom TenantStore that never calls Tenant.Validate: it builds the
// tenant anew for every request, as a store over a database would.
type forgetfulStore struct{ tenant func() *engine.Tenant }

func (s forgetfulStore) Tenant(_ context.Context, key string) (*engine.Tenant, error) {
	if key != testKey {
		return nil, engine.ErrUnknownTenant
	}
	return s.tenant(), nil
}

// A store that forgets Tenant.Validate still gets a validated tenant: the turn runs in the
// production environment, named as such, not in an environment without a name.
func TestUnvalidatedTenantIsValidatedByTheEngine(t *testing.T) {
	h := newHarness(t, engine.Config{Model: &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{
		{engine.TextEvent("Hello."), engine.FinishEvent(engine.FinishStop)}}},
		Tenants: forgetfulStore{testTenant}})
	res := h.turn(`{"transcript":"hi"}`)
	if res.resp.StatusCode != http.StatusOK || !strings.HasSuffix(res.names(), "done") {
		t.Fatalf("status %d, events %s", res.resp.StatusCode, res.names())
	}
	if !strings.Contains(h.logs.String(), `"env":"production"`) {
		t.Fatalf("the turn's log line does not name the production environment:\n%s", h.logs.String())
	}
}

// A store that returns a broken tenant gets a 500 problem and one log line naming the tenant and
// the field at fault, on every route, not a turn run with the broken tenant.
func TestInvalidTenantFromStoreIsAnInternalProblem(t *testing.T) {
	broken := func() *engine.Tenant {
		tn := testTenant()
		tn.Locale = "not a locale"
		return tn
	}
	model := &enginetest.ScriptedModel{Steps: [][]engine.ModelEvent{{engine.TextEvent("Hello."), engine.FinishEvent(engine.FinishStop)}}}
	h := newHarness(t, engine.Config{Model: model, Tenants: forgetfulStore{broken}})
	for _, route := range []struct{ path, body string }{
		{"/engine", `{"transcript":"hi"}`},
		{"/api/v1/create-session", ``},
	} {
		t.Run(route.path, func(t *testing.T) {
			before := strings.Count(h.logs.String(), "invalid tenant")
			resp := h.do(context.Background(), http.MethodPost, route.path, headers(), route.body)
			p := readProblem(t, resp)
			if resp.StatusCode != http.StatusInternalServerError || p.Code != engine.CodeInternal || !strings.Contains(p.Detail, "tenant") {
				t.Fatalf("status %d, problem %+v", resp.StatusCode, p)
			}
			var lines []string
			for _, l := range strings.Split(h.logs.String(), "\n") {
				if strings.Contains(l, "invalid tenant") {
					lines = append(lines, l)
				}
			}
			if len(lines) != before+1 {
				t.Fatalf("want one more log line about the invalid tenant, have:\n%s", strings.Join(lines, "\n"))
			}
			last := lines[len(lines)-1]
			if !strings.Contains(last, `"tenant":"pk_test"`) || !strings.Contains(last, `"field":"locale"`) {
				t.Fatalf("the log line does not name the tenant and the field: %s", last)
			}
		})
	}
	if model.Calls() != 0 {
		t.Fatalf("the model was called %d times for a broken tenant", model.Calls())
	}
}
