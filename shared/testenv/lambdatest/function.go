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
	"sync"
	"sync/atomic"
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
	// default 128. The process and what it starts are held to it: past
	// it they are killed and the invocation fails with ErrorOutOfMemory.
	MemoryMB int
	// Region defaults to DefaultRegion.
	Region string
	// Emulator, when set, runs Bootstrap: a bootstrap built for another
	// architecture runs as "Emulator Bootstrap" (qemu-aarch64-static).
	Emulator string
	// Layers are the folders of the function's Lambda layers, as Lambda
	// gives them to it: each one's bin on PATH and lib on
	// LD_LIBRARY_PATH (Lambda extracts them into /opt, whose bin and lib
	// those are). Unlike Lambda, the layers' bin comes first on PATH: this
	// machine's /usr/bin has programs AL2023's has not (git), which a
	// layer gives the function and the harness must run.
	Layers []string
	// VCPU is the CPU the function gets, its init included, as Lambda
	// gives it for the function's memory (one vCPU at 1,769 MB, in
	// proportion below); 0 leaves the process unthrottled. It needs a
	// writable cgroup CPU controller (Linux).
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

	cfg     Config
	sandbox *sandbox
	started time.Time
	output  emulator.Output

	mu   sync.Mutex
	proc *process // the runtime process; a retried init starts another

	// frozen orders freezing against killing: a process being killed is
	// never frozen again (a v1 freezer holds a killed process until
	// thawed, so a freeze that came after the kill's thaw would keep it
	// from ever ending).
	frozen sync.Mutex
}

// process is one run of the bootstrap.
type process struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	exitErr error // valid once exited is closed
	// initKilled: the harness ended it for running past InitLimit; the
	// execution environment lives on for the retried init.
	initKilled atomic.Bool
	killed     atomic.Bool // Kill was called: never freeze it again
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
	sb, err := newSandbox(cfg.Name, cfg.MemoryMB, cfg.VCPU)
	if err != nil {
		return nil, err
	}
	f := &Function{Name: cfg.Name, Arn: FunctionArn(cfg.Region, cfg.Name), cfg: cfg, sandbox: sb}
	rt, err := NewRuntime(RuntimeConfig{FunctionArn: f.Arn, Timeout: cfg.Timeout, OnTimeout: f.Kill,
		InitLimit: InitLimit, OnInitTimeout: f.endLateInit, RetryInit: f.launch,
		Freeze: f.freeze, Thaw: f.thaw})
	if err != nil {
		sb.remove()
		return nil, err
	}
	f.Runtime = rt
	f.started = time.Now()
	if err := f.launch(); err != nil {
		rt.Close()
		sb.remove()
		return nil, err
	}
	return f, nil
}

// launch starts the bootstrap in the sandbox.
func (f *Function) launch() error {
	cmd := exec.Command(f.cfg.Bootstrap)
	if f.cfg.Emulator != "" {
		cmd = exec.Command(f.cfg.Emulator, f.cfg.Bootstrap)
	}
	cmd.Dir = filepath.Dir(f.cfg.Bootstrap)
	cmd.Env = environ(f.cfg, f.Runtime.Addr(), f.sandbox.tmp)
	cmd.Stdout = &f.output
	cmd.Stderr = &f.output
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("lambdatest: start %s: %w", f.Name, err)
	}
	// The process runs its first instructions (the Go runtime's start,
	// well under a millisecond) before it is in its cgroup.
	if err := f.sandbox.add(cmd.Process.Pid); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("lambdatest: hold %s to its limits: %w", f.Name, err)
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	f.mu.Lock()
	f.proc = p
	f.mu.Unlock()
	go f.wait(p)
	return nil
}

// current returns the runtime process.
func (f *Function) current() *process {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.proc
}

// endLateInit ends a runtime whose init ran past InitLimit, and says so
// in the log as Lambda does.
func (f *Function) endLateInit() {
	p := f.current()
	fmt.Fprintf(&f.output, "INIT_REPORT Init Duration: %.2f ms Phase: init Status: timeout\n", float64(InitLimit.Microseconds())/1000)
	p.initKilled.Store(true)
	f.kill(p)
}

// freeze and thaw report a failure in the function's output: the
// invocations go on, unfrozen.
func (f *Function) freeze() {
	f.frozen.Lock()
	defer f.frozen.Unlock()
	if p := f.current(); p != nil && p.killed.Load() {
		return
	}
	if err := f.sandbox.freeze(); err != nil {
		fmt.Fprintf(&f.output, "lambdatest: freeze: %v\n", err)
	}
}

func (f *Function) thaw() {
	f.frozen.Lock()
	defer f.frozen.Unlock()
	f.thawLocked()
}

// thawLocked thaws, f.frozen held.
func (f *Function) thawLocked() {
	if err := f.sandbox.thaw(); err != nil {
		fmt.Fprintf(&f.output, "lambdatest: thaw: %v\n", err)
	}
}

// FunctionArn is the ARN of a function run here.
func FunctionArn(region, name string) string {
	return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", region, Account, name)
}

// environ is the process environment: what Lambda defines for a
// provided.al2023 function, then the function's own variables.
func environ(cfg Config, runtimeAPI, tmp string) []string {
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
		"TMPDIR":                          tmp,
		"LANG":                            "en_US.UTF-8",
		"PATH":                            "/usr/local/bin:/usr/bin/:/bin:/opt/bin",
	}
	var bins, libs []string
	for _, layer := range cfg.Layers {
		bins = append(bins, filepath.Join(layer, "bin"))
		libs = append(libs, filepath.Join(layer, "lib"))
	}
	if len(cfg.Layers) > 0 {
		env["PATH"] = strings.Join(append(bins, env["PATH"]), ":")
		env["LD_LIBRARY_PATH"] = strings.Join(libs, ":")
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

func (f *Function) wait(p *process) {
	err := p.cmd.Wait()
	p.exitErr = err
	close(p.exited)
	if p.initKilled.Load() {
		return
	}
	errType, reason := ErrorExit, "Runtime exited without providing a reason"
	if err != nil {
		reason = "Runtime exited with error: " + err.Error()
	}
	if err != nil && f.sandbox.outOfMemory(f.Output()) {
		errType = ErrorOutOfMemory
	}
	f.Runtime.Shutdown(errType, reason)
}

// Invoke runs one invocation (see Runtime.Invoke).
func (f *Function) Invoke(ctx context.Context, event []byte) (Response, error) {
	return f.Runtime.Invoke(ctx, event)
}

// InitDuration waits until the runtime first asks for an invocation and
// returns the time from the first process start to then: Lambda's Init
// Duration, which a cold start adds to its first invocation's and bills
// (see doc.go). It fails if the process reports an init error, exits, or
// runs past InitLimit first (then the first invocation retries the init).
func (f *Function) InitDuration(ctx context.Context) (time.Duration, error) {
	p := f.current()
	select {
	case <-f.Runtime.Ready(): // first: a retried init also ran past the limit
		return f.Runtime.ReadyAt().Sub(f.started), nil
	default:
	}
	select {
	case <-f.Runtime.Ready():
		return f.Runtime.ReadyAt().Sub(f.started), nil
	case <-f.Runtime.failed:
		ie, _ := f.Runtime.InitError()
		return 0, fmt.Errorf("%s reported an init error (%s): %s", f.Name, ie.ErrorType, ie.Payload)
	case <-f.Runtime.late:
		return 0, f.errInitLate()
	case <-p.exited:
		if p.initKilled.Load() {
			return 0, f.errInitLate()
		}
		return 0, fmt.Errorf("%s exited during init (%v): %s", f.Name, p.exitErr, f.Output())
	case <-ctx.Done():
		return 0, fmt.Errorf("%s: waiting for init: %w", f.Name, ctx.Err())
	}
}

// errInitLate says the init ran past InitLimit.
func (f *Function) errInitLate() error {
	return fmt.Errorf("%s: the init ran past Lambda's %v limit; the first invocation retries it", f.Name, InitLimit)
}

// Exited is closed when the runtime process has ended.
func (f *Function) Exited() <-chan struct{} { return f.current().exited }

// ExitCode is the process's exit code once it has ended (-1 if killed by a
// signal), or -1 while it runs.
func (f *Function) ExitCode() int {
	p := f.current()
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}

// Limits says how the function's memory, CPU share and freezing are held:
// "cgroup v1", "cgroup v2", or the fallbacks and why.
func (f *Function) Limits() string { return f.sandbox.How }

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
func (f *Function) Pid() int { return f.current().cmd.Process.Pid }

// PeakRSS is the process's peak resident set size in bytes so far (VmHWM
// in /proc/<pid>/status; Linux only).
func (f *Function) PeakRSS() (int64, error) {
	n, err := procstat.PeakRSS(f.Pid())
	if err != nil {
		return 0, fmt.Errorf("peak RSS of %s: %w", f.Name, err)
	}
	return n, nil
}

// PeakMemory is the most memory the function's processes (the bootstrap
// and what it started) have used at once, as Lambda's REPORT line's Max
// Memory Used counts it; only with a cgroup (Limits).
func (f *Function) PeakMemory() (int64, error) {
	if f.sandbox.group == nil {
		return 0, fmt.Errorf("peak memory of %s: no cgroup (%s)", f.Name, f.sandbox.How)
	}
	return f.sandbox.group.PeakMemory()
}

// Kill ends the process at once, as Lambda does when an invocation runs
// past its timeout: the invocation under way fails with ErrorExit, and so
// does every later one. It returns once the process has ended (Exited is
// closed).
func (f *Function) Kill() { f.kill(f.current()) }

// kill kills p, frozen or not, and waits for its end.
func (f *Function) kill(p *process) {
	f.frozen.Lock()
	p.killed.Store(true)
	_ = p.cmd.Process.Kill()
	f.thawLocked() // a process frozen by a v1 freezer dies once thawed
	f.frozen.Unlock()
	<-p.exited
}

// Stop kills the process if it still runs, waits for it, closes the
// Runtime API and removes the sandbox.
func (f *Function) Stop() {
	f.Kill()
	f.Runtime.Close()
	f.sandbox.remove()
}
