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
