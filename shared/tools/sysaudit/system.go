package sysaudit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// commandTimeout bounds each external command (python3, uname).
const commandTimeout = 2 * time.Second

// System returns the Source for the machine the process runs on.
func System() Source {
	return Source{
		Root:          os.DirFS("/"),
		Statfs:        statfs,
		Uname:         unameRelease,
		PythonVersion: python3Version,
		BuildInfo:     debug.ReadBuildInfo,
		Runtime: Runtime{
			GOOS:      runtime.GOOS,
			GOARCH:    runtime.GOARCH,
			GoVersion: runtime.Version(),
			NumCPU:    runtime.NumCPU(),
		},
	}
}

// python3Version runs `python3 --version`; nil when python3 is not on PATH
// or does not answer in time.
func python3Version(ctx context.Context) *string {
	if _, err := exec.LookPath("python3"); err != nil {
		return nil
	}
	out, err := runCommand(ctx, "python3", "--version")
	if err != nil {
		return nil
	}
	return parsePythonVersion(out)
}

// unameRelease runs `uname -r`, for systems without /proc (macOS).
func unameRelease(ctx context.Context) (string, error) {
	return runCommand(ctx, "uname", "-r")
}

// runCommand runs a short command with commandTimeout and returns its
// combined output (python2 printed its version to stderr).
func runCommand(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 500 * time.Millisecond // do not wait on children holding the pipes
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("run %s %s: %w", name, strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}
