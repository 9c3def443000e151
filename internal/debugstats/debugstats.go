// Package debugstats serves a process's runtime figures and profiles for the load tool: the
// figures at GET /debug/stats as JSON, the pprof profiles under /debug/pprof/. Both the
// reference server (on its -debug-addr, never on the public address) and the load tool's own
// servers use it, so that a soak reads the same figures from either.
package debugstats

import (
	"encoding/json"
	"net/http"
	"net/http/pprof"
	"runtime"
	"runtime/metrics"
)

// Stats are a process's runtime figures at one moment.
type Stats struct {
	AllocObjects uint64 `json:"alloc_objects"`
	AllocBytes   uint64 `json:"alloc_bytes"`
	HeapLive     uint64 `json:"heap_live_bytes"`
	HeapObjects  uint64 `json:"heap_objects"`
	TotalMemory  uint64 `json:"total_memory_bytes"`
	Goroutines   uint64 `json:"goroutines"`
	GCCycles     uint64 `json:"gc_cycles"`
}

var names = []string{
	"/gc/heap/allocs:objects",
	"/gc/heap/allocs:bytes",
	"/gc/heap/live:bytes",
	"/gc/heap/objects:objects",
	"/memory/classes/total:bytes",
	"/sched/goroutines:goroutines",
	"/gc/cycles/total:gc-cycles",
}

// Read returns the process's figures; with gc it collects garbage first, so that the live heap
// is current.
func Read(gc bool) Stats {
	if gc {
		runtime.GC()
	}
	samples := make([]metrics.Sample, len(names))
	for i, name := range names {
		samples[i].Name = name
	}
	metrics.Read(samples)
	v := func(i int) uint64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return samples[i].Value.Uint64()
	}
	return Stats{AllocObjects: v(0), AllocBytes: v(1), HeapLive: v(2), HeapObjects: v(3),
		TotalMemory: v(4), Goroutines: v(5), GCCycles: v(6)}
}

// Handler serves GET /debug/stats (?gc=1 collects garbage first) and the pprof profiles under
// /debug/pprof/. It exposes the process's internals: serve it on a private address only.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/stats", func(w http.ResponseWriter, r *http.Request) {
		s := Read(r.URL.Query().Get("gc") == "1")
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(s)
	})
	Profiles(mux)
	return mux
}

// Profiles registers the pprof handlers under /debug/pprof/ on mux.
func Profiles(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}
