package proclimit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// FS is where the cgroup file systems are mounted: cgroup v2's unified
// hierarchy, or v1's controllers each in its folder (memory/, cpu/,
// freezer/). A test points it elsewhere to run the fallbacks.
var FS = "/sys/fs/cgroup"

// Spec says what a Group holds its processes to.
type Spec struct {
	// Name begins the group's folder name (the pid of this process and a
	// number follow), so that a leftover group says whose it was.
	Name string
	// MemoryBytes is the memory limit, swap included; 0 for none.
	MemoryBytes int64
	// CPU makes the group able to take a CPU share (SetCPU).
	CPU bool
	// Freezer makes the group able to be frozen (Freeze, Thaw).
	Freezer bool
}

// Group is a cgroup made below this process's own, in each controller
// the Spec needs (v1), or in the unified hierarchy (v2): the kernel holds
// its processes to its limits together, the OOM killer kills in the group
// alone, and its members can be listed, frozen and killed whatever
// process group they moved to.
type Group struct {
	v2   bool
	dirs map[string]string // by v1 controller ("memory", "cpu", "freezer"); v2: one folder under every name
}

// groups numbers the groups this process makes.
var groups atomic.Int64

// New makes a group for s, or fails where this machine allows none: a
// controller missing, no right to make a group below this process's, or
// (v2) a parent group that holds processes, so that controllers cannot be
// enabled for its children.
func New(s Spec) (*Group, error) {
	_, statErr := os.Stat(filepath.Join(FS, "cgroup.controllers"))
	g := &Group{v2: statErr == nil, dirs: map[string]string{}}
	name := fmt.Sprintf("%s-%d-%d", s.Name, os.Getpid(), groups.Add(1))
	for _, c := range s.controllers() {
		parent, err := ownGroup(c, g.v2)
		if err != nil {
			g.Remove()
			return nil, err
		}
		if g.v2 && c != "freezer" { // v2 freezes without a controller
			if err := enable(parent, c); err != nil {
				g.Remove()
				return nil, err
			}
		}
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil && !(g.v2 && errors.Is(err, os.ErrExist)) {
			g.Remove()
			return nil, fmt.Errorf("make cgroup %s: %w", dir, err)
		}
		g.dirs[c] = dir
	}
	if err := g.setMemory(s.MemoryBytes); err != nil {
		g.Remove()
		return nil, err
	}
	return g, nil
}

// controllers lists the controllers s needs.
func (s Spec) controllers() []string {
	var cs []string
	if s.MemoryBytes > 0 {
		cs = append(cs, "memory")
	}
	if s.CPU {
		cs = append(cs, "cpu")
	}
	if s.Freezer {
		cs = append(cs, "freezer")
	}
	return cs
}

// ownGroup returns the folder of this process's group for controller (v1)
// or in the unified hierarchy (v2).
func ownGroup(controller string, v2 bool) (string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		fields := strings.SplitN(sc.Text(), ":", 3)
		if len(fields) != 3 {
			continue
		}
		if v2 && fields[0] == "0" && fields[1] == "" {
			return filepath.Join(FS, fields[2]), nil
		}
		if !v2 && slices.Contains(strings.Split(fields[1], ","), controller) {
			return filepath.Join(FS, fields[1], fields[2]), nil
		}
	}
	return "", fmt.Errorf("no %s cgroup in /proc/self/cgroup", controller)
}

// enable enables controller for the children of the v2 group at dir.
func enable(dir, controller string) error {
	on, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err == nil && slices.Contains(strings.Fields(string(on)), controller) {
		return nil
	}
	return os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+"+controller), 0o644)
}

func (g *Group) write(controller, name, value string) error {
	dir, ok := g.dirs[controller]
	if !ok {
		return fmt.Errorf("the cgroup has no %s controller", controller)
	}
	return os.WriteFile(filepath.Join(dir, name), []byte(value), 0o644)
}

func (g *Group) read(controller, name string) string {
	data, _ := os.ReadFile(filepath.Join(g.dirs[controller], name))
	return string(data)
}

// setMemory sets the memory limit, swap included (no limit when 0).
func (g *Group) setMemory(limit int64) error {
	if limit <= 0 {
		return nil
	}
	limitFile, swapFile, swap := "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", limit
	if g.v2 {
		limitFile, swapFile, swap = "memory.max", "memory.swap.max", 0
	}
	if err := g.write("memory", limitFile, strconv.FormatInt(limit, 10)); err != nil {
		return fmt.Errorf("set the memory limit: %w", err)
	}
	_ = g.write("memory", swapFile, strconv.FormatInt(swap, 10)) // absent without swap accounting
	return nil
}

// Kind names the mechanism: "cgroup v1" or "cgroup v2".
func (g *Group) Kind() string {
	if g.v2 {
		return "cgroup v2"
	}
	return "cgroup v1"
}

// Add moves process pid, all its threads, into the group.
func (g *Group) Add(pid int) error {
	for c := range g.dirs {
		if err := g.write(c, "cgroup.procs", strconv.Itoa(pid)); err != nil {
			return fmt.Errorf("move process %d into its %s cgroup: %w", pid, c, err)
		}
	}
	return nil
}

// cfsPeriod is the CFS period, in microseconds.
const cfsPeriod = 100000

// SetCPU gives the group's processes share of one CPU: a CFS quota of
// share × period per period (share 0: no quota).
func (g *Group) SetCPU(share float64) error {
	quota := strconv.Itoa(int(share * cfsPeriod))
	if share <= 0 {
		quota = "-1"
	}
	if g.v2 {
		if share <= 0 {
			quota = "max"
		}
		return g.write("cpu", "cpu.max", quota+" "+strconv.Itoa(cfsPeriod))
	}
	if err := g.write("cpu", "cpu.cfs_period_us", strconv.Itoa(cfsPeriod)); err != nil {
		return err
	}
	return g.write("cpu", "cpu.cfs_quota_us", quota)
}

// freezeTries and freezePause bound how long Freeze and Thaw wait for
// every task of the group to reach the state asked for.
const (
	freezeTries = 500
	freezePause = 2 * time.Millisecond
)

// Freeze stops every process of the group where it is, until Thaw: the
// kernel does not schedule them. It returns once they are all frozen.
func (g *Group) Freeze() error { return g.setFrozen(true) }

// Thaw lets the group's processes run again.
func (g *Group) Thaw() error { return g.setFrozen(false) }

func (g *Group) setFrozen(frozen bool) error {
	file, value, done := "freezer.state", "THAWED", func() bool { return strings.TrimSpace(g.read("freezer", "freezer.state")) == "THAWED" }
	if frozen {
		value = "FROZEN"
		done = func() bool { return strings.TrimSpace(g.read("freezer", "freezer.state")) == "FROZEN" }
	}
	if g.v2 {
		file, value = "cgroup.freeze", map[bool]string{true: "1", false: "0"}[frozen]
		done = func() bool { return strings.Contains(g.read("freezer", "cgroup.events"), "frozen "+value) }
	}
	if err := g.write("freezer", file, value); err != nil {
		return fmt.Errorf("freeze (%v) the cgroup: %w", frozen, err)
	}
	for range freezeTries {
		if done() {
			return nil
		}
		time.Sleep(freezePause)
	}
	return fmt.Errorf("the cgroup did not reach frozen=%v", frozen)
}

// OOMKilled reports whether the kernel's OOM killer killed a process of
// the group (memory.events in v2, memory.oom_control in v1).
func (g *Group) OOMKilled() bool {
	if g == nil {
		return false
	}
	name := "memory.oom_control"
	if g.v2 {
		name = "memory.events"
	}
	for _, line := range strings.Split(g.read("memory", name), "\n") {
		if n, ok := strings.CutPrefix(line, "oom_kill "); ok {
			return strings.TrimSpace(n) != "0"
		}
	}
	return false
}

// PeakMemory is the most memory the group's processes have used at once,
// page cache included (memory.peak in v2, memory.max_usage_in_bytes in
// v1): what Lambda reports as an environment's Max Memory Used, children
// such as git included.
func (g *Group) PeakMemory() (int64, error) {
	name := "memory.max_usage_in_bytes"
	if g.v2 {
		name = "memory.peak"
	}
	return strconv.ParseInt(strings.TrimSpace(g.read("memory", name)), 10, 64)
}

// KillAll kills every process in the group (a frozen one dies once
// thawed, which KillAll does).
func (g *Group) KillAll() {
	if g == nil {
		return
	}
	for c := range g.dirs {
		for _, field := range strings.Fields(g.read(c, "cgroup.procs")) {
			if pid, err := strconv.Atoi(field); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	if _, ok := g.dirs["freezer"]; ok {
		_ = g.Thaw()
	}
}

// removeTries and removePause bound how long Remove waits for the
// processes it killed to leave the group.
const (
	removeTries = 100
	removePause = 10 * time.Millisecond
)

// Remove kills what is left in the group and deletes it.
func (g *Group) Remove() {
	if g == nil {
		return
	}
	for c, dir := range g.dirs {
		for range removeTries {
			g.KillAll()
			if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(removePause)
		}
		delete(g.dirs, c)
	}
}
