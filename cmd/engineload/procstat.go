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

// processRSS returns the resident memory of a process, VmRSS of /proc/<pid>/status.
func processRSS(pid int) (uint64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("reading the memory of process %d: %w", pid, err)
	}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := bytes.Fields(v)
			if len(f) == 2 && string(f[1]) == "kB" {
				kb, err := strconv.ParseUint(string(f[0]), 10, 64)
				if err == nil {
					return kb << 10, nil
				}
			}
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
