package lambdatest

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/toolshed/toolshed/shared/proclimit"
)

// sandbox holds a function's processes as Lambda holds an execution
// environment: to its memory size (killed past it), to the CPU share its
// memory buys (Config.VCPU), and frozen between invocations. It uses a
// cgroup below this process's own where one may be made; where none may,
// memory is held by RLIMIT_AS (Go's runtime then exits "fatal error: out
// of memory" instead of being killed) and the freeze is a SIGSTOP of the
// process group, and a CPU share cannot be had.
type sandbox struct {
	group  *proclimit.Group // nil: the fallbacks
	memory int64            // bytes
	pgid   atomic.Int64     // the running process's group, for the SIGSTOP fallback
	// How says how the limits are held: "cgroup v1", "cgroup v2", or the
	// fallbacks and why.
	How string
	// tmp is the function's own /tmp (its TMPDIR).
	tmp string
}

// newSandbox makes the sandbox of a function of memoryMB and vcpu (0: no
// CPU share).
func newSandbox(name string, memoryMB int, vcpu float64) (*sandbox, error) {
	s, err := newLimits(name, memoryMB, vcpu)
	if err != nil {
		return nil, err
	}
	if s.tmp, err = os.MkdirTemp("", "lambdatest-tmp-"); err != nil {
		s.group.Remove()
		return nil, fmt.Errorf("lambdatest: the function's /tmp: %w", err)
	}
	return s, nil
}

// newLimits holds a function of memoryMB and vcpu in a cgroup, or says
// which fallbacks hold it.
func newLimits(name string, memoryMB int, vcpu float64) (*sandbox, error) {
	s := &sandbox{memory: int64(memoryMB) << 20}
	group, err := proclimit.New(proclimit.Spec{Name: "lambdatest-" + name, MemoryBytes: s.memory, CPU: vcpu > 0, Freezer: true})
	if err != nil {
		if vcpu > 0 {
			return nil, fmt.Errorf("lambdatest: a CPU share needs a writable cgroup: %w", err)
		}
		s.How = "RLIMIT_AS and SIGSTOP, no writable cgroup (" + err.Error() + ")"
		return s, nil
	}
	if vcpu > 0 {
		if err := group.SetCPU(vcpu); err != nil {
			group.Remove()
			return nil, fmt.Errorf("lambdatest: set the CPU share: %w", err)
		}
	}
	s.group, s.How = group, group.Kind()
	return s, nil
}

// add holds process pid, just started (the leader of its own process
// group), to the sandbox.
func (s *sandbox) add(pid int) error {
	s.pgid.Store(int64(pid))
	if s.group == nil {
		return proclimit.LimitAddressSpace(pid, s.memory)
	}
	return s.group.Add(pid)
}

// freeze stops the sandbox's processes until thaw.
func (s *sandbox) freeze() error {
	if s.group == nil {
		return syscall.Kill(-int(s.pgid.Load()), syscall.SIGSTOP)
	}
	return s.group.Freeze()
}

// thaw lets them run again.
func (s *sandbox) thaw() error {
	if s.group == nil {
		return syscall.Kill(-int(s.pgid.Load()), syscall.SIGCONT)
	}
	return s.group.Thaw()
}

// outOfMemory reports whether the process that wrote output ended for
// want of memory: the cgroup's OOM killer killed it, or (RLIMIT_AS) the Go
// runtime said so.
func (s *sandbox) outOfMemory(output string) bool {
	if s.group != nil {
		return s.group.OOMKilled()
	}
	return strings.Contains(output, "fatal error: out of memory") || strings.Contains(output, "runtime: out of memory")
}

// remove kills what is left and deletes the cgroup and the function's
// /tmp.
func (s *sandbox) remove() {
	s.group.Remove()
	os.RemoveAll(s.tmp)
}
