package usage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/convengine/engine"
	"github.com/convengine/engine/usage"
)

// downReader is a ledger that does not answer.
type downReader struct{}

func (downReader) Usage(context.Context, string, time.Time, time.Time) (*usage.Report, error) {
	return nil, fmt.Errorf("reading: %w", engine.ErrStoreUnavailable)
}

// The handler answers bad parameters with a 400 problem naming the parameter, other methods
// 405, a ledger that does not answer 503, and a tenant with no usage zeros.
func TestHandler(t *testing.T) {
	ledger := &usage.Memory{}
	ledger.WriteUsage(t.Context(), []usage.Record{{Time: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC), Kind: usage.KindModel,
		Tenant: "pk_a", Step: 1, Outcome: "ok", Model: "m", InputTokens: 100, OutputTokens: 7}})
	h := usage.Handler(ledger)
	for _, tc := range []struct {
		name, method, query string
		reader              usage.Reader
		status              int
		code, field         string
	}{
		{name: "no tenant", query: "", status: 400, code: "invalid_request", field: "tenant"},
		{name: "empty tenant", query: "tenant=&from=2026-11-01", status: 400, code: "invalid_request", field: "tenant"},
		{name: "a tenant too long", query: "tenant=" + strings.Repeat("k", 129), status: 400, code: "invalid_request", field: "tenant"},
		{name: "from not a day", query: "tenant=pk_a&from=26/11/2026", status: 400, code: "invalid_request", field: "from"},
		{name: "to not a day", query: "tenant=pk_a&from=2026-11-01&to=2026-11-31", status: 400, code: "invalid_request", field: "to"},
		{name: "to before from", query: "tenant=pk_a&from=2026-11-26&to=2026-11-01", status: 400, code: "invalid_request", field: "to"},
		{name: "more than a year", query: "tenant=pk_a&from=2020-01-01&to=2026-11-26", status: 400, code: "invalid_request", field: "to"},
		{name: "POST", method: http.MethodPost, query: "tenant=pk_a", status: 405, code: "method_not_allowed"},
		{name: "the ledger down", query: "tenant=pk_a", reader: downReader{}, status: 503, code: "store_unavailable"},
		{name: "a tenant with no usage", query: "tenant=pk_none&from=2026-11-01&to=2026-11-30", status: 200},
		{name: "the tenant's day", query: "tenant=pk_a&from=2026-11-26&to=2026-11-26", status: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hh := h
			if tc.reader != nil {
				hh = usage.Handler(tc.reader)
			}
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			rec := httptest.NewRecorder()
			hh.ServeHTTP(rec, httptest.NewRequest(method, "/usage?"+tc.query, nil))
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.status != 200 {
				var p struct {
					Type, Title, Code, Field, Detail string
					Status                           int
				}
				if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
					t.Errorf("Content-Type %q", ct)
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Code != tc.code || p.Field != tc.field || p.Status != tc.status || p.Title == "" || p.Type == "" || p.Detail == "" {
					t.Errorf("problem %+v (%v), want code %q field %q", p, err, tc.code, tc.field)
				}
				return
			}
			var rep usage.Report
			if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
			switch rep.Tenant {
			case "pk_none":
				if rep.Totals != (usage.Totals{}) || len(rep.Days) != 0 || len(rep.Models) != 0 || rep.From != "2026-11-01" || rep.To != "2026-11-30" {
					t.Errorf("report %+v, want zeros", rep)
				}
				if !strings.Contains(rec.Body.String(), `"input_tokens":0`) || !strings.Contains(rec.Body.String(), `"days":[]`) {
					t.Errorf("the zeros are not spelled out: %s", rec.Body)
				}
			case "pk_a":
				if rep.Totals.InputTokens != 100 || rep.Totals.OutputTokens != 7 || rep.Totals.Turns != 1 || len(rep.Days) != 1 || rep.Days[0].Day != "2026-11-26" {
					t.Errorf("report %+v", rep)
				}
			}
		})
	}
}

// Without from and to, the handler reports the current month to today.
func TestHandlerDefaultsToThisMonth(t *testing.T) {
	rec := httptest.NewRecorder()
	usage.Handler(&usage.Memory{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/usage?tenant=pk_a", nil))
	var rep usage.Report
	json.Unmarshal(rec.Body.Bytes(), &rep)
	today := time.Now().UTC()
	if rep.To != today.Format(time.DateOnly) || rep.From != today.Format("2006-01")+"-01" {
		t.Errorf("from %s to %s, want this month", rep.From, rep.To)
	}
}

// The memory ledger keeps the days of its retention only.
func TestMemoryRetention(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	ledger := &usage.Memory{Retention: 10 * 24 * time.Hour, Now: func() time.Time { return now }}
	rec := func(day time.Time) usage.Record {
		return usage.Record{Time: day, Kind: usage.KindTool, Tenant: "pk_a", Outcome: "ok"}
	}
	ledger.WriteUsage(t.Context(), []usage.Record{rec(now), rec(now.AddDate(0, 0, -30))})
	from := now.AddDate(0, 0, -40)
	if r, _ := ledger.Usage(t.Context(), "pk_a", from, now); r.Totals.ToolCalls != 1 {
		t.Errorf("a record older than the retention was kept: %+v", r.Totals)
	}
	now = now.AddDate(0, 0, 11)
	ledger.WriteUsage(t.Context(), []usage.Record{rec(now)})
	if r, _ := ledger.Usage(t.Context(), "pk_a", from, now); r.Totals.ToolCalls != 1 || r.Days[0].Day != "2026-12-07" {
		t.Errorf("the day past the retention was kept: %+v", r)
	}
}
