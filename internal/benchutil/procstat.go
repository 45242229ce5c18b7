package benchutil

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ProcStat is what benchmarks and load tests read of a process in
// /proc/<pid>/stat (Linux).
type ProcStat struct {
	State     string  // "R", "S", ...; "Z" once it exited and is not yet reaped
	PPid      int     // its parent
	CPUMillis float64 // user and system time so far, 10 ms resolution
	StartTime string  // clock ticks since boot: with the pid, names one process
}

// ReadStat reads a process's stat; false when there is no such process
// (or no /proc).
func ReadStat(pid int) (ProcStat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcStat{}, false
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses, so
	// the fields start after the last ')'. utime and stime are the 12th
	// and 13th of them, starttime the 20th.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 20 {
		return ProcStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return ProcStat{State: f[0], PPid: ppid, CPUMillis: (utime + stime) * 1000 / userHZ, StartTime: f[19]}, true
}

// userHZ is the unit of /proc's CPU times: 100 on every Linux
// architecture Go supports.
const userHZ = 100

// Children lists the processes whose parent is pid.
func Children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := ReadStat(p); ok && st.PPid == pid {
			out = append(out, p)
		}
	}
	return out
}
