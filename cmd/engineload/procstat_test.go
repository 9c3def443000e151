package main

import (
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	for _, c := range []struct {
		name, line string
		want       time.Duration
		bad        bool
	}{
		{name: "plain", line: "4242 (engine) S 1 4242 4242 0 -1 4194560 1207 0 0 0 150 25 0 0 20 0 9 0 1000 0 0\n", want: 1750 * time.Millisecond},
		{name: "command with spaces and parentheses", line: "7 (a) b (c)) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 5 0 0", want: 70 * time.Millisecond},
		{name: "truncated", line: "7 (x) R 1 2 3", bad: true},
		{name: "not numbers", line: "7 (x) R 1 7 7 0 -1 0 0 0 0 0 a b 0 0", bad: true},
		{name: "no command", line: "7 x R", bad: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseStat([]byte(c.line))
			if c.bad != (err != nil) || got != c.want {
				t.Fatalf("parseStat = %v, %v", got, err)
			}
		})
	}
	if cpu, err := processCPU("self"); err != nil || cpu < 0 {
		t.Fatalf("this process: %v, %v", cpu, err)
	}
}
