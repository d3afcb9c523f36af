package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// userHZ is the unit of utime and stime in /proc/<pid>/stat. The kernel
// reports them in USER_HZ, which is 100 on every Linux architecture that
// exposes /proc to user space (sysconf(_SC_CLK_TCK)), so a figure has 10 ms
// resolution.
const userHZ = 100

// cpuTime is the CPU time (user + system, all threads, exited ones
// included) that process pid has used so far.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read stat of %d: %w", pid, err)
	}
	return parseStatCPU(b)
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/<pid>/stat line. The command name (field 2) is in parentheses and
// may itself hold spaces and parentheses, so fields are counted from the
// last ')'.
func parseStatCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat: no command name in %q", firstLine(string(stat)))
	}
	f := bytes.Fields(stat[i+1:])
	// f[0] is field 3 (state), so utime (14) is f[11] and stime (15) f[12].
	if len(f) < 13 {
		return 0, fmt.Errorf("stat: %d fields after the command name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		v, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("stat: bad CPU time %q", s)
		}
		ticks += v
	}
	return time.Duration(ticks) * (time.Second / userHZ), nil
}

// cpuDef is the broker CPU row of a workload.
func cpuDef(w workload) metricDef {
	return metricDef{secCPU, "broker CPU during " + w.name, "CPU s", false}
}

// measureFromHere restarts the broker CPU count of the running workload,
// so that its preparation (filling a topic) is left out.
func (e *env) measureFromHere() {
	if t, err := cpuTime(e.pid); err == nil {
		e.cpuFrom = t
	}
}
