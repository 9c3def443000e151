package usage

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/convengine/engine"
)

// maxTenant bounds the tenant parameter, as the engine bounds an engine key.
const maxTenant = 128

// Handler serves tenants' usage from r, as JSON: GET ?tenant=<engine key>&from=YYYY-MM-DD&to=YYYY-MM-DD
// answers the [Report] of the tenant on those UTC days, both included (from defaults to the
// first day of the current month, to to today; at most MaxDays). A missing or bad parameter is
// a 400 invalid_request problem naming it; a ledger that does not answer, 503
// store_unavailable.
//
// The handler checks no credentials: it names every tenant's spending. A host mounts it behind
// its own administrators' authentication, never on the engine's public address; the reference
// server serves it on its private debug address.
func Handler(r Reader) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			engine.WriteProblem(w, engine.NewProblem(http.StatusMethodNotAllowed, engine.CodeMethodNotAllowed, "usage is read with GET"))
			return
		}
		q := req.URL.Query()
		tenant := q.Get("tenant")
		switch {
		case tenant == "":
			engine.WriteProblem(w, engine.InvalidField("tenant", "the tenant's engine key is required"))
			return
		case len(tenant) > maxTenant:
			engine.WriteProblem(w, engine.InvalidField("tenant", "longer than "+strconv.Itoa(maxTenant)+" bytes"))
			return
		}
		now := time.Now().UTC()
		to := truncDay(now)
		from := time.Date(to.Year(), to.Month(), 1, 0, 0, 0, 0, time.UTC)
		for _, p := range []struct {
			name string
			t    *time.Time
		}{{"from", &from}, {"to", &to}} {
			if v := q.Get(p.name); v != "" {
				d, err := time.Parse(dayFormat, v)
				if err != nil {
					engine.WriteProblem(w, engine.InvalidField(p.name, "not a day as YYYY-MM-DD"))
					return
				}
				*p.t = d
			}
		}
		if CheckRange(from, to) != nil {
			engine.WriteProblem(w, engine.InvalidField("to", "the days from from through to must be 1 to "+strconv.Itoa(MaxDays)))
			return
		}
		rep, err := r.Usage(req.Context(), tenant, from, to)
		switch {
		case errors.Is(err, ErrRange):
			engine.WriteProblem(w, engine.InvalidField("to", err.Error()))
			return
		case errors.Is(err, engine.ErrStoreUnavailable):
			engine.WriteProblem(w, engine.NewProblem(http.StatusServiceUnavailable, engine.CodeStoreUnavailable, "the usage ledger does not answer"))
			return
		case err != nil:
			engine.WriteProblem(w, err)
			return
		}
		body, err := json.Marshal(rep)
		if err != nil {
			engine.WriteProblem(w, err)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		h.Set("Content-Length", strconv.Itoa(len(body)+1))
		w.WriteHeader(http.StatusOK)
		if req.Method != http.MethodHead {
			w.Write(append(body, '\n'))
		}
	})
}
