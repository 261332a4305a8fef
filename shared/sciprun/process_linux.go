package sciprun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/toolshed/toolshed/shared/proclimit"
	"golang.org/x/sys/unix"
)

// gate is the shell an indexer starts behind. It waits for a line on its
// stdin, so that the limits and the cgroup are in place before the
// indexer's first instruction (and inherited by whatever it starts), then
// becomes the indexer, with /dev/null as its stdin. Closing its stdin
// without a line stops it before the indexer runs.
const gate = `read -r _ || exit 1; exec "$@" </dev/null`

// drainTime bounds how long output is read after the indexer's processes
// were killed: one that escaped both its process group and a cgroup may
// hold the pipe open.
const drainTime = time.Second

// runLimited runs argv in its own process group, held to l: RLIMIT_FSIZE
// on what it writes, no core dump, its memory in a memory cgroup where
// this machine allows one, else RLIMIT_AS when rlimitAS (Go's runtime
// reserves a fixed amount of address space beyond what it uses; V8
// reserves much more, so node is held by its heap limit alone), at
// niceness nice. When it ends, or ctx does, every process of its group and
// cgroup is killed.
func runLimited(ctx context.Context, argv, env []string, dir string, l Limits, nice int, rlimitAS bool) (result, error) {
	group := newMemoryGroup(l.MemoryBytes)
	defer group.Remove()
	gateR, gateW, err := os.Pipe()
	if err != nil {
		return result{}, err
	}
	defer gateW.Close()
	logR, logW, err := os.Pipe()
	if err != nil {
		gateR.Close()
		return result{}, err
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", gate, "sciprun"}, argv...)...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = gateR, logW, logW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { kill(cmd.Process.Pid, group); return nil }
	err = cmd.Start()
	gateR.Close()
	logW.Close()
	if err != nil {
		logR.Close()
		return result{}, err
	}
	log := &tail{}
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(log, logR); close(copied) }()
	memory, err := limit(cmd.Process.Pid, group, l, rlimitAS)
	peak := watchPeak(cmd.Process.Pid)
	if err == nil && nice > 0 {
		// Set on the gate, before the indexer starts: inherited by all it
		// starts. Lowering a priority needs no privilege; should it fail
		// anyway, the index is still worth making.
		_ = unix.Setpriority(unix.PRIO_PROCESS, cmd.Process.Pid, nice)
	}
	if err == nil {
		// Should the gate be gone already (ctx ended), the write fails and
		// the run ends as ctx says.
		_, _ = gateW.Write([]byte("\n"))
	}
	gateW.Close()
	waitExit(cmd.Process.Pid)
	peakRSS := peak.end()
	kill(cmd.Process.Pid, group)
	waitErr := cmd.Wait()
	_ = logR.SetReadDeadline(time.Now().Add(drainTime))
	<-copied
	logR.Close()
	switch {
	case err != nil:
		return result{}, fmt.Errorf("limit the indexer: %w", err)
	case cmd.ProcessState == nil:
		return result{}, fmt.Errorf("wait for the indexer: %w", waitErr)
	}
	r := ended(cmd.ProcessState, log.String(), memory, group)
	r.peakRSS = peakRSS
	return r, nil
}

// limit holds the gate process pid, and so the indexer it becomes, to l,
// and says how its memory is held.
func limit(pid int, group *proclimit.Group, l Limits, rlimitAS bool) (string, error) {
	set := func(resource int, n int64) error {
		return unix.Prlimit(pid, resource, &unix.Rlimit{Cur: uint64(n), Max: uint64(n)}, nil)
	}
	// A file of exactly OutputBytes is allowed; a write past it fails.
	if err := set(unix.RLIMIT_FSIZE, l.OutputBytes+1); err != nil {
		return "", fmt.Errorf("RLIMIT_FSIZE: %w", err)
	}
	if err := set(unix.RLIMIT_CORE, 0); err != nil {
		return "", fmt.Errorf("RLIMIT_CORE: %w", err)
	}
	switch {
	case group != nil:
		return group.Kind(), group.Add(pid)
	case rlimitAS:
		return "RLIMIT_AS", proclimit.LimitAddressSpace(pid, l.MemoryBytes)
	}
	return "V8 heap limit", nil
}

// waitExit waits until process pid has exited, without reaping it: while
// it is unreaped, its pid (its process group's id) cannot be taken by
// another process, so killing the group kills only what it left.
func waitExit(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// kill kills the process group led by pid and, with a cgroup, every
// process in it (one that left the group too).
func kill(pid int, group *proclimit.Group) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	group.KillAll()
}

// ended reads how the process ended.
func ended(state *os.ProcessState, output, memory string, group *proclimit.Group) result {
	r := result{success: state.Success(), exit: state.String(), output: output, memory: memory,
		oomKilled: group.OOMKilled()}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok {
		r.fileTooLarge = ws.Signaled() && ws.Signal() == syscall.SIGXFSZ
	}
	return r
}

// newMemoryGroup makes a memory cgroup of limit bytes for one run, or
// returns nil where this machine allows none (the run falls back to
// rlimits).
func newMemoryGroup(limit int64) *proclimit.Group {
	g, err := proclimit.New(proclimit.Spec{Name: "sciprun", MemoryBytes: limit})
	if err != nil {
		slog.Debug("sciprun: no memory cgroup; falling back to rlimits", "err", err)
		return nil
	}
	return g
}
