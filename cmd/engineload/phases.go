package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// phaseSpec is one entry of -mode: an operation, how many workers run it and, for an open
// loop, at what rate.
type phaseSpec struct {
	name        string
	concurrency int
	rate        float64
}

// parsePhases reads -mode: a comma-separated list of name[=workers][@rate] entries, such as
// "turn=1000,voice=1000@10,execute=8@5". An entry without workers or rate takes -c and -rate.
func parsePhases(s string, concurrency int, rate float64) ([]phaseSpec, error) {
	var specs []phaseSpec
	seen := map[string]bool{}
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		p := phaseSpec{concurrency: concurrency, rate: rate}
		rest, r, hasRate := strings.Cut(entry, "@")
		name, workers, hasWorkers := strings.Cut(rest, "=")
		p.name = name
		if _, ok := modes[name]; !ok {
			return nil, fmt.Errorf("-mode %q: %q is not one of %s", s, name, modeNames())
		}
		if seen[name] {
			return nil, fmt.Errorf("-mode %q: %s appears twice", s, name)
		}
		seen[name] = true
		if hasWorkers {
			n, err := strconv.Atoi(workers)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("-mode %q: the workers of %s must be a positive integer", s, name)
			}
			p.concurrency = n
		}
		if hasRate {
			f, err := strconv.ParseFloat(r, 64)
			if err != nil || f <= 0 {
				return nil, fmt.Errorf("-mode %q: the rate of %s must be a positive number of operations per second", s, name)
			}
			p.rate = f
		}
		specs = append(specs, p)
	}
	if len(specs) == 0 {
		return nil, errors.New("-mode is empty")
	}
	return specs, nil
}

// label names a phase in progress lines and reports.
func (p phaseSpec) label() string {
	s := fmt.Sprintf("%s×%d", p.name, p.concurrency)
	if p.rate > 0 {
		s += fmt.Sprintf("@%g/s", p.rate)
	}
	return s
}
