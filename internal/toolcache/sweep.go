package toolcache

import "time"

// Sweep deletes the entries of m that expired by now among n of them, visited in Go's random
// iteration order; n < 0 visits them all. until returns when an entry expires.
func Sweep[V any](m map[string]V, n int, until func(V) time.Time, now time.Time) {
	for k, v := range m {
		if !now.Before(until(v)) {
			delete(m, k)
		}
		if n--; n == 0 {
			return
		}
	}
}
