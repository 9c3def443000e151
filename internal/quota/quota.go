// Package quota names the counters of a tenant's budget and their windows, for the Budgets of
// packages usage (in memory) and redisstore (in Redis), which must count alike.
package quota

import (
	"math"
	"time"

	"github.com/convengine/engine"
)

// A Counter is one count of a budget in one window: what a spend adds to it, and the limit it
// may not pass (0: none, counted all the same, so that a limit set later sees the window's
// spend so far).
type Counter struct {
	// Key names the tenant's counter in its window, such as "tokens:d:20261126": unique within a
	// tenant.
	Key string
	// Limit is the JSON name of the Limits field, such as "tokens_per_day".
	Limit string
	Max   int64
	Add   int64
	// End is when the window closes: the counter can be forgotten after it.
	End time.Time
}

// Counters are the counters s spends in the windows of now (UTC days and months). Speech is
// counted in milliseconds. The order is always the same, so that a settlement matches its
// reservation counter by counter.
func Counters(s engine.Spend, now time.Time) []Counter {
	l := &s.Tenant.Limits
	now = now.UTC()
	day := now.Format("20060102")
	dayEnd := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	monthEnd := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	cs := []Counter{
		{Key: "tokens:d:" + day, Limit: "tokens_per_day", Max: l.TokensPerDay, Add: max(0, s.Tokens), End: dayEnd},
		{Key: "tokens:m:" + now.Format("200601"), Limit: "tokens_per_month", Max: l.TokensPerMonth, Add: max(0, s.Tokens), End: monthEnd},
		{Key: "speech:d:" + day, Limit: "speech_seconds_per_day", Max: Millis(l.SpeechSecondsPerDay), Add: Millis(s.SpeechSeconds), End: dayEnd},
	}
	if s.User != "" {
		cs = append(cs, Counter{Key: "turns:" + s.User + ":d:" + day, Limit: "turns_per_user_per_day",
			Max: int64(l.TurnsPerUserPerDay), Add: int64(max(0, s.Turns)), End: dayEnd})
	}
	return cs
}

// Millis is seconds in whole milliseconds, rounded up; 0 for what is not a positive number.
func Millis(seconds float64) int64 {
	if !(seconds > 0) {
		return 0
	}
	return int64(math.Ceil(min(seconds, 1e12) * 1000))
}

// Over reports whether adding c to a count of have passes its limit. It compares what is left
// rather than the sum, which could overflow.
func (c *Counter) Over(have int64) bool {
	return c.Max > 0 && c.Add > 0 && (have > c.Max || c.Add > c.Max-max(have, 0))
}

// Deltas are what settling to spent changes in the counters reserved: spent's amounts minus
// the reserved ones, counter by counter (a settlement's user is the reservation's).
func Deltas(reserved []Counter, spent engine.Spend) []int64 {
	d := make([]int64, len(reserved))
	for i, c := range reserved {
		var v int64
		switch c.Limit {
		case "tokens_per_day", "tokens_per_month":
			v = max(0, spent.Tokens)
		case "speech_seconds_per_day":
			v = Millis(spent.SpeechSeconds)
		case "turns_per_user_per_day":
			v = int64(max(0, spent.Turns))
		}
		d[i] = v - c.Add
	}
	return d
}
