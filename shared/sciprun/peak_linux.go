package sciprun

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// peakInterval is how often a run's resident memory is sampled.
const peakInterval = 20 * time.Millisecond

// peakWatch follows the high-water mark of a process's resident memory
// (VmHWM in /proc/<pid>/status) while it runs. wait4's rusage cannot say
// it: Go starts a child sharing the parent's memory until it execs, and
// Linux counts that memory in the child's ru_maxrss, so every indexer a
// server of 1 GB started peaked at 1 GB. VmHWM is of the process's own
// memory, which exec replaces: the gate's first, then the indexer's.
// What the indexer starts (go list) is not counted, nor growth in the
// last interval before it exits.
type peakWatch struct {
	pid  int
	stop chan struct{}
	done chan struct{}
	peak int64
}

// watchPeak samples process pid's VmHWM now, then every peakInterval
// until end.
func watchPeak(pid int) *peakWatch {
	w := &peakWatch{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	w.sample()
	go func() {
		defer close(w.done)
		tick := time.NewTicker(peakInterval)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
				w.sample()
			}
		}
	}()
	return w
}

// end stops the sampling (call it once the process has exited) and
// returns the peak, in bytes.
func (w *peakWatch) end() int64 {
	close(w.stop)
	<-w.done
	return w.peak
}

func (w *peakWatch) sample() {
	if hwm, err := vmHWM(w.pid); err == nil {
		w.peak = max(w.peak, hwm)
	}
}

// vmHWM reads process pid's VmHWM, in bytes.
func vmHWM(pid int) (int64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range bytes.Split(status, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM for process %d (it has exited)", pid)
}
