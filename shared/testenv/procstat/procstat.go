// Package procstat reads what a process uses — its memory and its CPU time —
// from Linux's /proc, for benchmarks and test harnesses.
package procstat

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// PeakRSS returns the peak resident set size of process pid in bytes so
// far (VmHWM in /proc/<pid>/status).
func PeakRSS(pid int) (int64, error) {
	return statusKB(pid, "VmHWM")
}

// RSS returns the resident set size of process pid in bytes now (VmRSS in
// /proc/<pid>/status).
func RSS(pid int) (int64, error) {
	return statusKB(pid, "VmRSS")
}

// statusKB reads a "Field:  1234 kB" line of /proc/<pid>/status, in bytes.
func statusKB(pid int, field string) (int64, error) {
	file, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer file.Close()
	return parseKB(file, field)
}

// parseKB reads the "Field:  1234 kB" line of a /proc status file.
func parseKB(r io.Reader, field string) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), field+":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("unexpected %s line %q", field, sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s %q: %w", field, fields[0], err)
		}
		return kb * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s line in the process status", field)
}

// clockTicks is the unit of /proc/<pid>/stat's times: USER_HZ, 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// CPUTime returns the CPU time process pid has used so far, user and
// system (utime + stime in /proc/<pid>/stat).
func CPUTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStat(string(data))
}

// parseStat reads utime and stime from a /proc/<pid>/stat line. The second
// field, the command in parentheses, may hold spaces and parentheses
// itself, so fields are counted from the last ')'.
func parseStat(line string) (time.Duration, error) {
	end := strings.LastIndexByte(line, ')')
	if end < 0 {
		return 0, fmt.Errorf("unexpected stat line %q", line)
	}
	// After ")": state (field 3), ..., utime (14), stime (15).
	fields := strings.Fields(line[end+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("stat line with %d fields after the command", len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat time %q: %w", f, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// Usage is what a process has used so far: CPU time, and resident memory
// now.
type Usage struct {
	CPU time.Duration
	RSS int64
}

// Sample reads the usage of process pid.
func Sample(pid int) (Usage, error) {
	cpu, err := CPUTime(pid)
	if err != nil {
		return Usage{}, err
	}
	rss, err := RSS(pid)
	if err != nil {
		return Usage{}, err
	}
	return Usage{CPU: cpu, RSS: rss}, nil
}

// Bounds of CheckIdle: in IdleWindow after an answer, a process that has
// no work left uses at most IdleCPU of CPU time and grows by at most
// IdleGrowth bytes of resident memory. (A call that kept working after its
// answer used seconds of CPU and hundreds of megabytes.)
const (
	IdleWindow = 500 * time.Millisecond
	IdleCPU    = 100 * time.Millisecond
	IdleGrowth = 32 << 20
)

// CheckIdle is called when process pid has just answered the call what
// (before: its usage when the call was made; how: what came of it, for
// messages): it waits IdleWindow and fails tb if the process used more
// than IdleCPU of CPU time or grew by more than IdleGrowth in it — work the
// call left behind. It asserts on work left, not on the machine's speed.
func CheckIdle(tb testing.TB, pid int, what, how string, before Usage) {
	tb.Helper()
	answered, after := overWindow(tb, pid)
	tb.Logf("%s: %s; call %v CPU, then %v CPU and %+d KB in %v", what, how,
		answered.CPU-before.CPU, after.CPU-answered.CPU, (after.RSS-answered.RSS)>>10, IdleWindow)
	if cpu := after.CPU - answered.CPU; cpu > IdleCPU {
		tb.Errorf("%s: %v of CPU in the %v after its answer (%s), want at most %v", what, cpu, IdleWindow, how, IdleCPU)
	}
	if grew := after.RSS - answered.RSS; grew > IdleGrowth {
		tb.Errorf("%s: resident memory grew by %d MB in the %v after its answer (%s)", what, grew>>20, IdleWindow, how)
	}
}

// WaitIdle waits, for at most limit, until process pid has gone a whole
// IdleWindow using no more than a fifth of IdleCPU (two clock ticks, so
// that a timer's tick is not work): the background work of its start (an
// index saved after it is ready, say) is over, so that CheckIdle measures
// the calls made from then on. It fails tb if the process is still busy
// at limit.
func WaitIdle(tb testing.TB, pid int, limit time.Duration) {
	tb.Helper()
	deadline := time.Now().Add(limit)
	for {
		start, end := overWindow(tb, pid)
		cpu := end.CPU - start.CPU
		if cpu <= IdleCPU/5 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("process %d still used %v of CPU in %v after %v", pid, cpu, IdleWindow, limit)
		}
	}
}

// overWindow samples process pid, waits IdleWindow and samples it again.
func overWindow(tb testing.TB, pid int) (start, end Usage) {
	tb.Helper()
	start, err := Sample(pid)
	if err != nil {
		tb.Fatal(err)
	}
	time.Sleep(IdleWindow)
	if end, err = Sample(pid); err != nil {
		tb.Fatal(err)
	}
	return start, end
}
