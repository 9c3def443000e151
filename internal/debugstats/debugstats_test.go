package debugstats_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/convengine/engine/internal/debugstats"
)

func TestHandlerServesStatsAndProfiles(t *testing.T) {
	srv := httptest.NewServer(debugstats.Handler())
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/debug/stats?gc=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s debugstats.Stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	if s.Goroutines == 0 || s.HeapLive == 0 || s.TotalMemory < s.HeapLive || s.GCCycles == 0 {
		t.Errorf("stats = %+v: want goroutines, a live heap within the total memory, and the collection asked for", s)
	}

	resp, err = http.Get(srv.URL + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("goroutine profile: %s", resp.Status)
	}
}
