package proc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Children returns the ids of this process's children whose command is name, zombies
// included. It reads /proc and returns nil where there is none.
func Children(name string) []int {
	const commLen = 15 // the kernel keeps the first 15 bytes of a command's name
	if len(name) > commLen {
		name = name[:commLen]
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	self := os.Getpid()
	var out []int
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		s := string(b)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		f := strings.Fields(s[close+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		if ppid == self && s[open+1:close] == name {
			pid, _ := strconv.Atoi(strings.TrimSpace(s[:open]))
			out = append(out, pid)
		}
	}
	return out
}

// NoChildren fails t, a testing.TB, if a child process named one of names remains. Processes
// being reaped get a moment to go. It takes the two methods it calls rather than testing.TB, so
// that the adapters that import this package do not link package testing.
func NoChildren(t interface {
	Helper()
	Errorf(format string, args ...any)
}, names ...string) {
	t.Helper()
	for _, name := range names {
		var left []int
		for range 100 {
			if left = Children(name); len(left) == 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if len(left) > 0 {
			t.Errorf("%d %s processes remain: %v", len(left), name, left)
		}
	}
}
