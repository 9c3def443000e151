package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// clockTick is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, 100 on Linux.
const clockTick = 10 * time.Millisecond

// processCPU returns the user and system CPU time a process used so far, from
// /proc/<pid>/stat ("self" for this process).
func processCPU(pid string) (time.Duration, error) {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, fmt.Errorf("reading the CPU time of process %s: %w", pid, err)
	}
	return parseStat(data)
}

// parseStat reads utime and stime, fields 14 and 15 of proc(5)'s stat line. The command name,
// field 2, is in parentheses and may hold spaces and parentheses itself.
func parseStat(data []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc stat line")
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("malformed /proc stat line")
	}
	utime, err1 := strconv.ParseInt(string(fields[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(fields[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed /proc stat line")
	}
	return time.Duration(utime+stime) * clockTick, nil
}
