package main

import (
	"fmt"
	"io"
	"syscall"
)

// raiseFileLimit raises the soft limit of open files to the hard one: an idle run holds a
// connection per worker, and so does the engine it starts, which inherits the limit.
func raiseFileLimit(stderr io.Writer) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur >= l.Max {
		return
	}
	was := l.Cur
	l.Cur = l.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		fmt.Fprintf(stderr, "engineload: raising the limit of open files from %d: %v\n", was, err)
	}
}
