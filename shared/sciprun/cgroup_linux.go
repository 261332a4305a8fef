package sciprun

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// cgroupFS is where the cgroup file systems are mounted: cgroup v2's
// unified hierarchy, or v1's controllers each in its folder (memory/). A
// test points it elsewhere to run the fallbacks.
var cgroupFS = "/sys/fs/cgroup"

// memoryGroup is a memory cgroup made for one indexer run, below this
// process's own group: the kernel holds every process in it to the limit
// together (the OOM killer kills in the group alone), and its members can
// be listed and killed, whatever process group they moved to.
type memoryGroup struct {
	dir string
	v2  bool
}

// groups numbers the groups this process makes.
var groups atomic.Int64

// newMemoryGroup makes a memory group of limit bytes, swap included, or
// returns nil where this machine allows none: no memory controller, no
// right to make a group below this process's, or (v2) a parent group that
// holds processes, so that the memory controller cannot be enabled for
// its children.
func newMemoryGroup(limit int64) *memoryGroup {
	g, err := makeMemoryGroup(limit)
	if err != nil {
		slog.Debug("sciprun: no memory cgroup; falling back to rlimits", "err", err)
		return nil
	}
	return g
}

func makeMemoryGroup(limit int64) (*memoryGroup, error) {
	parent, v2, err := ownMemoryGroup()
	if err != nil {
		return nil, err
	}
	if v2 {
		if err := enableMemory(parent); err != nil {
			return nil, err
		}
	}
	g := &memoryGroup{dir: filepath.Join(parent, fmt.Sprintf("sciprun-%d-%d", os.Getpid(), groups.Add(1))), v2: v2}
	if err := os.Mkdir(g.dir, 0o755); err != nil {
		return nil, err
	}
	limitFile, swapFile, swap := "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", limit
	if v2 {
		limitFile, swapFile, swap = "memory.max", "memory.swap.max", 0
	}
	if err := g.write(limitFile, strconv.FormatInt(limit, 10)); err != nil {
		g.remove()
		return nil, err
	}
	_ = g.write(swapFile, strconv.FormatInt(swap, 10)) // absent without swap accounting
	return g, nil
}

// ownMemoryGroup returns the folder of this process's memory cgroup, and
// whether it is cgroup v2's.
func ownMemoryGroup() (dir string, v2 bool, err error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", false, err
	}
	_, statErr := os.Stat(filepath.Join(cgroupFS, "cgroup.controllers"))
	v2 = statErr == nil
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		fields := strings.SplitN(sc.Text(), ":", 3)
		if len(fields) != 3 {
			continue
		}
		if v2 && fields[0] == "0" && fields[1] == "" {
			return filepath.Join(cgroupFS, fields[2]), true, nil
		}
		if !v2 && slices.Contains(strings.Split(fields[1], ","), "memory") {
			return filepath.Join(cgroupFS, "memory", fields[2]), false, nil
		}
	}
	return "", false, errors.New("no memory cgroup in /proc/self/cgroup")
}

// enableMemory enables the memory controller for the children of the v2
// group at dir.
func enableMemory(dir string) error {
	on, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err == nil && slices.Contains(strings.Fields(string(on)), "memory") {
		return nil
	}
	return os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory"), 0o644)
}

func (g *memoryGroup) write(name, value string) error {
	return os.WriteFile(filepath.Join(g.dir, name), []byte(value), 0o644)
}

// kind names the group's mechanism for RunStats.Memory.
func (g *memoryGroup) kind() string {
	if g.v2 {
		return "cgroup v2"
	}
	return "cgroup v1"
}

// add moves process pid into the group.
func (g *memoryGroup) add(pid int) error {
	if err := g.write("cgroup.procs", strconv.Itoa(pid)); err != nil {
		return fmt.Errorf("move the indexer into its memory cgroup: %w", err)
	}
	return nil
}

// oomKilled reports whether the kernel's OOM killer killed a process of
// the group (memory.events in v2, memory.oom_control in v1).
func (g *memoryGroup) oomKilled() bool {
	if g == nil {
		return false
	}
	name := "memory.oom_control"
	if g.v2 {
		name = "memory.events"
	}
	data, _ := os.ReadFile(filepath.Join(g.dir, name))
	for _, line := range strings.Split(string(data), "\n") {
		if n, ok := strings.CutPrefix(line, "oom_kill "); ok {
			return strings.TrimSpace(n) != "0"
		}
	}
	return false
}

// killAll kills every process in the group.
func (g *memoryGroup) killAll() {
	if g == nil {
		return
	}
	data, _ := os.ReadFile(filepath.Join(g.dir, "cgroup.procs"))
	for _, field := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(field); err == nil {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// removeTries and removePause bound how long remove waits for the
// processes it killed to leave the group.
const (
	removeTries = 100
	removePause = 10 * time.Millisecond
)

// remove kills what is left in the group and deletes it.
func (g *memoryGroup) remove() {
	if g == nil {
		return
	}
	for range removeTries {
		g.killAll()
		if err := os.Remove(g.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(removePause)
	}
	slog.Warn("sciprun: a memory cgroup could not be removed", "dir", g.dir)
}
