package lambdatest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/emulator"
	"github.com/toolshed/toolshed/shared/testenv/procstat"
)

// Account is the AWS account id in the ARNs of functions run here.
const Account = "123456789012"

// DefaultRegion is the region functions run in unless Config says otherwise.
const DefaultRegion = "us-east-1"

// Config describes a function to run.
type Config struct {
	// Name is the function name (AWS_LAMBDA_FUNCTION_NAME).
	Name string
	// Bootstrap is the executable, built for the host (for Go:
	// go build -tags lambda.norpc) unless Emulator runs it.
	Bootstrap string
	// Env is the function's own environment: what the deployment sets,
	// plus any endpoint overrides a test needs (AWS_ENDPOINT_URL_*). It is
	// added to the variables Lambda defines and wins over them.
	Env map[string]string
	// Timeout is the function timeout; default DefaultTimeout.
	Timeout time.Duration
	// MemoryMB is the configured memory (AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
	// default 128. It is reported to the function, not enforced.
	MemoryMB int
	// Region defaults to DefaultRegion.
	Region string
	// Emulator, when set, runs Bootstrap: a bootstrap built for another
	// architecture runs as "Emulator Bootstrap" (qemu-aarch64-static).
	Emulator string
	// VCPU is the CPU the function gets once its init is over, as Lambda
	// gives it for the function's memory (one vCPU at 1,769 MB, in
	// proportion below); 0 leaves the process unthrottled. Init runs at
	// full speed, as Lambda's does. It needs a writable cgroup CPU
	// controller (Linux; see cpushare_linux.go).
	VCPU float64
}

// FullVCPUMemoryMB is the memory setting at which Lambda gives a function
// one full vCPU; it gives less in proportion below.
const FullVCPUMemoryMB = 1769

// VCPUOf is the CPU share a function of memoryMB gets (Config.VCPU).
func VCPUOf(memoryMB int) float64 { return float64(memoryMB) / FullVCPUMemoryMB }

// Function is a bootstrap running as a real process against its own
// Runtime API, like one Lambda execution environment.
type Function struct {
	Name    string
	Arn     string
	Runtime *Runtime

	cmd     *exec.Cmd
	share   *cpuShare // nil: unthrottled
	started time.Time
	output  emulator.Output
	exited  chan struct{}
	exitErr error // valid once exited is closed
}

// Start starts the Runtime API and the bootstrap process. Stop ends both.
func Start(cfg Config) (*Function, error) {
	if cfg.Name == "" || cfg.Bootstrap == "" {
		return nil, errors.New("lambdatest: a function needs a Name and a Bootstrap")
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	if cfg.MemoryMB == 0 {
		cfg.MemoryMB = 128
	}
	f := &Function{
		Name:   cfg.Name,
		Arn:    FunctionArn(cfg.Region, cfg.Name),
		exited: make(chan struct{}),
	}
	rt, err := NewRuntime(RuntimeConfig{FunctionArn: f.Arn, Timeout: cfg.Timeout, OnTimeout: f.Kill})
	if err != nil {
		return nil, err
	}
	f.Runtime = rt
	f.cmd = exec.Command(cfg.Bootstrap)
	if cfg.Emulator != "" {
		f.cmd = exec.Command(cfg.Emulator, cfg.Bootstrap)
	}
	f.cmd.Dir = filepath.Dir(cfg.Bootstrap)
	f.cmd.Env = environ(cfg, rt.Addr())
	f.cmd.Stdout = &f.output
	f.cmd.Stderr = &f.output
	f.cmd.SysProcAttr = dieWithParent()
	f.started = time.Now()
	if err := f.cmd.Start(); err != nil {
		rt.Close()
		return nil, fmt.Errorf("lambdatest: start %s: %w", cfg.Name, err)
	}
	go f.wait()
	if cfg.VCPU > 0 {
		if f.share, err = newCPUShare(cfg.Name, cfg.VCPU); err != nil {
			f.Stop()
			return nil, err
		}
		go f.throttleAfterInit()
	}
	return f, nil
}

// throttleAfterInit puts the process under its CPU share once its init is
// over (its first request for an invocation).
func (f *Function) throttleAfterInit() {
	select {
	case <-f.Runtime.Ready():
		if err := f.share.add(f.cmd.Process.Pid); err != nil {
			f.output.Write([]byte("lambdatest: " + err.Error() + "\n"))
		}
	case <-f.exited:
	}
}

// FunctionArn is the ARN of a function run here.
func FunctionArn(region, name string) string {
	return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", region, Account, name)
}

// environ is the process environment: what Lambda defines for a
// provided.al2023 function, then the function's own variables.
func environ(cfg Config, runtimeAPI string) []string {
	env := map[string]string{
		"AWS_LAMBDA_RUNTIME_API":          runtimeAPI,
		"AWS_LAMBDA_FUNCTION_NAME":        cfg.Name,
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": strconv.Itoa(cfg.MemoryMB),
		"AWS_LAMBDA_LOG_GROUP_NAME":       "/aws/lambda/" + cfg.Name,
		"AWS_LAMBDA_LOG_STREAM_NAME":      time.Now().UTC().Format("2006/01/02") + "/[$LATEST]" + strings.ReplaceAll(newRequestID(), "-", ""),
		"AWS_LAMBDA_INITIALIZATION_TYPE":  "on-demand",
		"AWS_REGION":                      cfg.Region,
		"AWS_DEFAULT_REGION":              cfg.Region,
		"AWS_ACCESS_KEY_ID":               "AKIALAMBDATEST000000",
		"AWS_SECRET_ACCESS_KEY":           "lambdatest-secret-access-key",
		"AWS_SESSION_TOKEN":               "lambdatest-session-token",
		"LAMBDA_TASK_ROOT":                filepath.Dir(cfg.Bootstrap),
		"LAMBDA_RUNTIME_DIR":              "/var/runtime",
		"_HANDLER":                        filepath.Base(cfg.Bootstrap),
		"TZ":                              ":UTC",
		"LANG":                            "en_US.UTF-8",
		"PATH":                            "/usr/local/bin:/usr/bin/:/bin:/opt/bin",
	}
	for k, v := range cfg.Env {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func (f *Function) wait() {
	err := f.cmd.Wait()
	reason := "Runtime exited without providing a reason"
	if err != nil {
		reason = "Runtime exited with error: " + err.Error()
	}
	f.exitErr = err
	close(f.exited)
	f.Runtime.Shutdown(reason)
}

// Invoke runs one invocation (see Runtime.Invoke).
func (f *Function) Invoke(ctx context.Context, event []byte) (Response, error) {
	return f.Runtime.Invoke(ctx, event)
}

// InitDuration waits until the runtime first asks for an invocation and
// returns the time from process start to then. It fails if the process
// reports an init error or exits first.
func (f *Function) InitDuration(ctx context.Context) (time.Duration, error) {
	select {
	case <-f.Runtime.Ready():
		return f.Runtime.ReadyAt().Sub(f.started), nil
	case <-f.Runtime.failed:
		ie, _ := f.Runtime.InitError()
		return 0, fmt.Errorf("%s reported an init error (%s): %s", f.Name, ie.ErrorType, ie.Payload)
	case <-f.exited:
		return 0, fmt.Errorf("%s exited during init (%v): %s", f.Name, f.exitErr, f.Output())
	case <-ctx.Done():
		return 0, fmt.Errorf("%s: waiting for init: %w", f.Name, ctx.Err())
	}
}

// Exited is closed when the process has ended.
func (f *Function) Exited() <-chan struct{} { return f.exited }

// ExitCode is the process's exit code once it has ended (-1 if killed by a
// signal), or -1 while it runs.
func (f *Function) ExitCode() int {
	select {
	case <-f.exited:
		return f.cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}

// Output is everything the process wrote to stdout and stderr so far.
func (f *Function) Output() string { return f.output.String() }

// WaitOutput waits until the function's output contains s, and reports
// whether it did before ctx ended. The output comes through a pipe, so a
// line the process wrote may arrive after the event that followed it
// (the end of init, a response).
func (f *Function) WaitOutput(ctx context.Context, s string) bool {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(f.Output(), s) {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}

// Pid is the process's id, for measurements.
func (f *Function) Pid() int { return f.cmd.Process.Pid }

// PeakRSS is the process's peak resident set size in bytes so far (VmHWM
// in /proc/<pid>/status; Linux only).
func (f *Function) PeakRSS() (int64, error) {
	n, err := procstat.PeakRSS(f.cmd.Process.Pid)
	if err != nil {
		return 0, fmt.Errorf("peak RSS of %s: %w", f.Name, err)
	}
	return n, nil
}

// Kill ends the process at once, as Lambda does when an invocation runs
// past its timeout, or the kernel when it runs out of memory: the
// invocation under way fails with ErrorExit, and so does every later one.
// It returns once the process has ended (Exited is closed).
func (f *Function) Kill() {
	_ = f.cmd.Process.Kill()
	<-f.exited
}

// Stop kills the process if it still runs, waits for it and closes the
// Runtime API.
func (f *Function) Stop() {
	f.Kill()
	f.Runtime.Close()
	if f.share != nil {
		f.share.remove()
	}
}
