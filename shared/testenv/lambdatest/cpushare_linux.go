package lambdatest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
)

// cpuShare is a cgroup (v1 cpu controller, or v2) whose processes get a
// share of one CPU: a CFS quota of share × period per period, as Lambda
// throttles a function's CPU by its memory.
type cpuShare struct {
	dir string
	v2  bool
}

// shares numbers the groups a test process makes.
var shares atomic.Int64

// cfsPeriod is the CFS period, in microseconds.
const cfsPeriod = 100000

// newCPUShare makes a cgroup giving its processes share of a CPU.
func newCPUShare(name string, share float64) (*cpuShare, error) {
	quota := strconv.Itoa(int(share * cfsPeriod))
	group := fmt.Sprintf("lambdatest-%s-%d-%d", name, os.Getpid(), shares.Add(1))
	if _, err := os.Stat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"); err == nil {
		c := &cpuShare{dir: filepath.Join("/sys/fs/cgroup/cpu", group)}
		return c, c.make(map[string]string{"cpu.cfs_period_us": strconv.Itoa(cfsPeriod), "cpu.cfs_quota_us": quota})
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		c := &cpuShare{dir: filepath.Join("/sys/fs/cgroup", group), v2: true}
		return c, c.make(map[string]string{"cpu.max": quota + " " + strconv.Itoa(cfsPeriod)})
	}
	return nil, errors.New("lambdatest: a CPU share needs a cgroup CPU controller (/sys/fs/cgroup)")
}

// make creates the group and writes its settings.
func (c *cpuShare) make(settings map[string]string) error {
	if err := os.Mkdir(c.dir, 0o755); err != nil {
		return fmt.Errorf("lambdatest: a CPU share needs a writable cgroup: %w", err)
	}
	for name, v := range settings {
		if err := os.WriteFile(filepath.Join(c.dir, name), []byte(v), 0o644); err != nil {
			c.remove()
			return fmt.Errorf("lambdatest: set %s of a CPU share: %w", name, err)
		}
	}
	return nil
}

// add moves a process, all its threads, into the group.
func (c *cpuShare) add(pid int) error {
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		return fmt.Errorf("throttle process %d: %w", pid, err)
	}
	return nil
}

// remove deletes the group (once its processes have exited).
func (c *cpuShare) remove() { _ = os.Remove(c.dir) }
