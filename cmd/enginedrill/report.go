package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/convengine/engine/examples/demobank"
)

// lostWithin bounds how long after a replica's kill a turn it was running may take to end for
// its client: resumed on another replica, or ended with turn_lost once its lease lapsed.
const lostWithin = 15 * time.Second

// Report is what the drill found.
type Report struct {
	Elapsed time.Duration `json:"elapsed"`
	// Wanted and Done: what the users wanted done (a turn over SSE, a turn on a voice socket,
	// an action) and got, asking again after failures as a user does.
	Wanted map[string]int `json:"wanted"`
	Done   map[string]int `json:"done"`
	// Attempts counts every attempt by kind and outcome ("turn ok", "turn resumed", "turn lost",
	// "voice closed:1012", ...).
	Attempts map[string]int `json:"attempts"`
	// Closes counts the voice turns whose socket closed, by close code (-1: the connection
	// broke without a close frame).
	Closes map[string]int `json:"closes"`
	// Actions: the confirmed actions by the answer their user got, and the ledger's verdict.
	Actions ActionCheck   `json:"actions"`
	Faults  []FaultReport `json:"faults"`
	// Failures are the checks that did not hold.
	Failures []string `json:"failures,omitempty"`
}

// ActionCheck holds the demo bank's ledger against the actions confirmed.
type ActionCheck struct {
	Confirmed, Executed, Declined, Unknown int
	// Once: executed and in the ledger once. Twice: in the ledger more than once. Missing:
	// executed by the engine's answer, but not in the ledger.
	Once, Twice, Missing int
}

// FaultReport is one fault and what the users saw of it.
type FaultReport struct {
	fault
	// Interrupted: of a kill, the SSE turns the replica was running, by how each ended; and the
	// last of them to end, after the kill.
	Interrupted map[string]int `json:"interrupted,omitempty"`
	LastEnded   time.Duration  `json:"lastEnded,omitempty"`
	// Actions: of a kill, the actions in flight that it cut; Settled, when the last of them
	// got its answer from another replica (once its claim's lease passed), after the kill.
	Actions int           `json:"actions,omitempty"`
	Settled time.Duration `json:"settled,omitempty"`
	// Failed counts the attempts that failed after the fault and before the next, by outcome;
	// Recovered is when the last of them ended, after the fault: from then on, every attempt
	// succeeded.
	Failed    map[string]int `json:"failed,omitempty"`
	Recovered time.Duration  `json:"recovered"`
}

// report reads the tally and the bank's ledger, and checks them.
func report(t *tally, faults []fault, bank *demobank.Bank, start time.Time, elapsed time.Duration) *Report {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := &Report{Elapsed: elapsed, Wanted: t.wanted, Done: t.done, Attempts: map[string]int{}, Closes: map[string]int{}}
	settled := map[string]time.Time{} // when each action got its answer
	for _, a := range t.attempts {
		r.Attempts[a.kind+" "+a.outcome]++
		if code, ok := strings.CutPrefix(a.outcome, "closed:"); ok {
			r.Closes[code]++
		}
		if a.kind == "execute" && a.ok() {
			settled[a.token] = a.end
		}
	}
	for kind, n := range t.wanted {
		if t.done[kind] != n {
			r.fail("%s: %d of %d wanted were not done after %d attempts each", kind, n-t.done[kind], n, maxAttempts)
		}
	}

	ac := &r.Actions
	for token, outcome := range t.ledger {
		ac.Confirmed++
		n := bank.Transfers(token)
		switch {
		case n > 1:
			ac.Twice++
		case outcome == "executed" && n == 1:
			ac.Once++
		case outcome == "executed":
			ac.Missing++
		}
		switch outcome {
		case "executed":
			ac.Executed++
		case "declined":
			ac.Declined++
		default:
			ac.Unknown++
		}
	}
	if ac.Twice > 0 || ac.Missing > 0 || ac.Unknown > 0 {
		r.fail("actions: %d ran twice, %d answered executed are not in the ledger, %d never got an answer", ac.Twice, ac.Missing, ac.Unknown)
	}

	for i, f := range faults {
		at := start.Add(f.At)
		next := start.Add(elapsed)
		if i+1 < len(faults) {
			next = start.Add(faults[i+1].At)
		}
		fr := FaultReport{fault: f, Failed: map[string]int{}}
		var last time.Time
		for _, a := range t.attempts {
			if f.Kind == "kill" && a.kind == "turn" && a.replica == f.Target && a.start.Before(at) && a.end.After(at) {
				if fr.Interrupted == nil {
					fr.Interrupted = map[string]int{}
				}
				fr.Interrupted[a.outcome]++
				fr.LastEnded = max(fr.LastEnded, a.end.Sub(at))
			}
			// An action cut by the kill: the balancer may have sent it again to another replica,
			// which answered for it.
			if f.Kind == "kill" && a.kind == "execute" && a.start.Before(at) && !a.end.Before(at) && !a.ok() {
				fr.Actions++
				if end, ok := settled[a.token]; ok {
					fr.Settled = max(fr.Settled, end.Sub(at))
				}
			}
			if a.ok() || a.end.Before(at) || !a.end.Before(next) {
				continue
			}
			if f.Kind != "kill" && a.outcome == "refused:action_in_progress" {
				continue // an action a replica killed before was running: that kill's figure
			}
			fr.Failed[a.kind+" "+a.outcome]++
			if a.end.After(last) {
				last = a.end
			}
		}
		if !last.IsZero() {
			fr.Recovered = last.Sub(at)
		}
		switch f.Kind {
		case "kill":
			if fr.LastEnded > lostWithin {
				r.fail("kill of %s (round %d): a turn it was running ended for its client %v after the kill", f.Target, f.Round, fr.LastEnded.Round(time.Millisecond))
			}
		case "drain":
			if f.Err != "" {
				r.fail("drain of %s (round %d): %s", f.Target, f.Round, f.Err)
			}
			// What the drain may not cause: a turn or an action refused or cut. Voice sockets
			// closed with 1012 are its doing as documented, and an action claimed by a replica
			// killed before is not.
			cut := 0
			for _, a := range t.attempts {
				if !a.ok() && !a.start.Before(at) && a.start.Before(at.Add(f.Took)) && a.outcome != "closed:1012" && a.outcome != "refused:action_in_progress" {
					cut++
				}
			}
			if cut > 0 {
				r.fail("drain of %s (round %d): %d turns or actions failed while it drained", f.Target, f.Round, cut)
			}
		}
		r.Faults = append(r.Faults, fr)
	}
	return r
}

func (r *Report) fail(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

// print writes the report for a person.
func (r *Report) print(w io.Writer) {
	fmt.Fprintf(w, "\n== the drill's figures (%.0f s)\n", r.Elapsed.Seconds())
	for _, kind := range []string{"turn", "voice", "execute"} {
		fmt.Fprintf(w, "%-8s wanted %d, done %d; attempts: %s\n", kind, r.Wanted[kind], r.Done[kind], counts(r.Attempts, kind+" "))
	}
	fmt.Fprintf(w, "voice turns whose socket closed, by close code: %s\n", counts(r.Closes, ""))
	a := r.Actions
	fmt.Fprintf(w, "actions: %d confirmed, %d executed, %d declined, %d without an answer; ledger: %d once, %d twice, %d missing\n",
		a.Confirmed, a.Executed, a.Declined, a.Unknown, a.Once, a.Twice, a.Missing)
	for _, f := range r.Faults {
		fmt.Fprintf(w, "round %d %-8s %-22s at %6.1fs", f.Round, f.Kind, f.Target, f.At.Seconds())
		switch f.Kind {
		case "failover":
			fmt.Fprintf(w, ", promoted after %.2fs", f.Took.Seconds())
		case "drain":
			fmt.Fprintf(w, ", exited after %.2fs", f.Took.Seconds())
		}
		if f.Interrupted != nil {
			fmt.Fprintf(w, "; turns in flight on it: %s, the last ended %.2fs after", counts(f.Interrupted, ""), f.LastEnded.Seconds())
		}
		if f.Actions > 0 {
			fmt.Fprintf(w, "; actions in flight on it: %d, the last settled %.2fs after", f.Actions, f.Settled.Seconds())
		}
		fmt.Fprintf(w, "; failed attempts: %s; recovered after %.2fs\n", counts(f.Failed, ""), f.Recovered.Seconds())
	}
	if len(r.Failures) == 0 {
		fmt.Fprintln(w, "every check held")
	}
	for _, f := range r.Failures {
		fmt.Fprintln(w, "FAIL", f)
	}
}

// counts writes the counts of m whose key starts with prefix, without it: "ok 120, lost 2".
func counts(m map[string]int, prefix string) string {
	var keys []string
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "none"
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", strings.TrimPrefix(k, prefix), m[k])
	}
	return strings.Join(parts, ", ")
}
