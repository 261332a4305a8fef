// Package sysaudit implements the sys-audit tool (alias
// adam-sys-audit): it reports on the machine the tool server runs on.
//
// Commands:
//   - list_hardware: CPU (model, physical cores, threads, maximum frequency),
//     NVIDIA GPUs, RAM, disks, operating system and architecture.
//   - list_software: OS version, kernel, python3 and Go versions, and the Go
//     modules built into this binary.
//   - diff_baseline: compares a previous list_hardware or list_software
//     output with the current state of the same kind.
//
// Everything is read through a Source, so tests run against fixtures and
// System() reads the real machine. A value that cannot be read is reported
// as unknown (null, an empty list, the string "unknown", or 0 where the
// contract allows nothing else) and never invented.
//
// Units: every *_gb field is in decimal gigabytes (10^9 bytes), rounded to
// two decimals; frequency_mhz is in megahertz.
package sysaudit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"runtime/debug"

	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/wiring"
)

// ToolName is the contract name of the tool.
const ToolName = "sys-audit"

// The commands of the contract.
const (
	cmdListHardware = "list_hardware"
	cmdListSoftware = "list_software"
	cmdDiffBaseline = "diff_baseline"
)

// Source is everything the tool reads about the machine. Any field may be
// nil; what it would have provided is then reported as unknown.
type Source struct {
	// Root is the file system rooted at "/": the tool reads "proc/cpuinfo",
	// "proc/meminfo", "proc/mounts", "sys/devices/...", "etc/os-release" and
	// "proc/driver/nvidia/..." from it.
	Root fs.FS

	// Statfs returns the size and the used bytes of the file system mounted
	// at path (an absolute path such as "/" or "/data").
	Statfs func(path string) (size, used uint64, err error)

	// Uname returns the kernel release ("6.8.0-45-generic"). It is asked
	// only when Root has no proc/sys/kernel/osrelease (e.g. on macOS).
	Uname func(ctx context.Context) (string, error)

	// PythonVersion returns the version of python3 ("3.11.4"), or nil when
	// python3 is not installed or its version cannot be read.
	PythonVersion func(ctx context.Context) *string

	// BuildInfo returns the build information of the running binary, as
	// debug.ReadBuildInfo does.
	BuildInfo func() (*debug.BuildInfo, bool)

	// Runtime describes the Go runtime.
	Runtime Runtime
}

// Runtime is what the Go runtime knows about the process.
type Runtime struct {
	GOOS      string // runtime.GOOS, e.g. "linux"
	GOARCH    string // runtime.GOARCH, e.g. "arm64"
	GoVersion string // runtime.Version(), e.g. "go1.26.8"
	NumCPU    int    // runtime.NumCPU(); used only when /proc/cpuinfo cannot be read
}

// input is the tool's arguments, as the contract's inputSchema allows them.
type input struct {
	Command  string          `json:"command"`
	Baseline json.RawMessage `json:"baseline,omitempty"`
}

// Family registers sys-audit over the machine it runs on.
var Family = family.Family{
	Name:  "sys-audit",
	Tools: []string{ToolName},
	New: func(context.Context, *wiring.Env) ([]toolkit.Tool, error) {
		return []toolkit.Tool{New(System())}, nil
	},
}

// New returns the sys-audit tool reading the machine through src.
func New(src Source) toolkit.Tool {
	a := &auditor{src: src}
	return toolkit.Tool{Name: ToolName, Handler: toolkit.Typed(a.handle)}
}

// auditor runs the commands against one Source.
type auditor struct {
	src Source
}

func (a *auditor) handle(ctx context.Context, _ toolkit.Call, in input) (toolkit.Result, error) {
	hasBaseline := len(in.Baseline) > 0 && !bytes.Equal(bytes.TrimSpace(in.Baseline), []byte("null"))
	if hasBaseline && in.Command != cmdDiffBaseline {
		return toolkit.Result{}, toolerr.Field("baseline", "%s", "only used by command "+cmdDiffBaseline).
			With("command", in.Command)
	}

	switch in.Command {
	case cmdListHardware:
		hw, err := a.hardware(ctx)
		if err != nil {
			return toolkit.Result{}, err
		}
		msg := fmt.Sprintf("%d CPU threads, %d GPUs, %d disks", hw.CPU.Threads, len(hw.GPUs), len(hw.Disks))
		return toolkit.Result{Data: hw, Message: msg}, nil
	case cmdListSoftware:
		sw, err := a.software(ctx)
		if err != nil {
			return toolkit.Result{}, err
		}
		msg := fmt.Sprintf("%s, kernel %s, %d packages", sw.OSVersion, sw.Kernel, len(sw.Packages))
		return toolkit.Result{Data: sw, Message: msg}, nil
	case cmdDiffBaseline:
		if !hasBaseline {
			return toolkit.Result{}, toolerr.Field("baseline", "%s", "required by command "+cmdDiffBaseline)
		}
		d, err := a.diffBaseline(ctx, in.Baseline)
		if err != nil {
			return toolkit.Result{}, err
		}
		n := len(d.Changes.Added) + len(d.Changes.Removed) + len(d.Changes.Modified)
		return toolkit.Result{Data: d, Message: fmt.Sprintf("%d %s changes since the baseline", n, d.Kind)}, nil
	default:
		// The input schema already restricts command to the enum; this
		// guards direct callers of the handler.
		msg := fmt.Sprintf("must be one of %s, %s, %s", cmdListHardware, cmdListSoftware, cmdDiffBaseline)
		return toolkit.Result{}, toolerr.Field("command", "%s", msg).With("command", in.Command)
	}
}

// readFile reads name (relative to "/", e.g. "proc/cpuinfo") from the
// Source's root file system.
func (a *auditor) readFile(name string) ([]byte, error) {
	if a.src.Root == nil {
		return nil, fmt.Errorf("read /%s: no root file system", name)
	}
	data, err := fs.ReadFile(a.src.Root, name)
	if err != nil {
		return nil, fmt.Errorf("read /%s: %w", name, err)
	}
	return data, nil
}
