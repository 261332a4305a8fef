package sciprun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Runner runs the indexers of one Toolshed installation.
type Runner struct {
	// GoIndexer is the Go indexer's command line, to which Run adds
	// "-o FILE DIR": the running binary's own subcommand, such as
	// {os.Executable(), "index-go"}. Empty: Go projects are not indexed.
	GoIndexer []string
	// NodeModules is the installation's node_modules folder, holding
	// @sourcegraph/scip-typescript and @sourcegraph/scip-python (see
	// NodeModules); never the indexed repository's own.
	NodeModules string
	// Node is the node executable; empty: node on PATH.
	Node string
	// Nice is the niceness indexers run at (0 to 19; 0: this process's
	// own), so that one indexing in the background leaves the cores to
	// the answers. Where it cannot be set the run goes on without it.
	Nice int
}

// Limits bound one indexer run; a zero field takes its default.
type Limits struct {
	Time        time.Duration // wall time; default 10 minutes
	MemoryBytes int64         // the indexer's memory; default 2 GB
	OutputBytes int64         // the SCIP file's size; default 1 GB
}

// The default limits.
const (
	DefaultTime        = 10 * time.Minute
	DefaultMemoryBytes = 2 << 30
	DefaultOutputBytes = 1 << 30
)

func (l Limits) orDefaults() Limits {
	if l.Time <= 0 {
		l.Time = DefaultTime
	}
	if l.MemoryBytes <= 0 {
		l.MemoryBytes = DefaultMemoryBytes
	}
	if l.OutputBytes <= 0 {
		l.OutputBytes = DefaultOutputBytes
	}
	return l
}

// RunStats are what a run measured.
type RunStats struct {
	Duration time.Duration
	// PeakRSS is the largest resident set, in bytes, of the indexer's own
	// process (VmHWM, sampled while it runs: see peakWatch; the processes
	// it starts are not counted). 0 off Linux.
	PeakRSS int64
	// OutputBytes is the SCIP file's size.
	OutputBytes int64
	// Memory says how the memory limit was held: "cgroup v1" or "cgroup v2"
	// (memory.limit_in_bytes, memory.max), "RLIMIT_AS", "V8 heap limit"
	// (node's --max-old-space-size alone), or "none".
	Memory string
}

// Why an indexer run made no index; a RunError wraps one of them.
var (
	ErrUnavailable = errors.New("not installed")
	ErrTimeLimit   = errors.New("time limit")
	ErrMemoryLimit = errors.New("memory limit")
	ErrOutputLimit = errors.New("output limit")
	ErrFailed      = errors.New("failed")
)

// RunError is an indexer run that made no index, and why.
type RunError struct {
	Indexer string // goscip, scip-typescript, scip-python
	Root    string // the project's root
	Kind    error  // ErrUnavailable, ErrTimeLimit, ErrMemoryLimit, ErrOutputLimit or ErrFailed
	Detail  string // "killed after 10m0s", "exit status 1", ...
	Output  string // the last of what the indexer printed
}

func (e *RunError) Error() string {
	s := fmt.Sprintf("%v: %v: %s", job{name: e.Indexer, root: e.Root}, e.Kind, e.Detail)
	if e.Output != "" {
		s += "; it printed: " + summary(e.Output)
	}
	return s
}

func (e *RunError) Unwrap() error { return e.Kind }

// Run runs p's indexer on the project at dir (the project's folder on this
// machine) as a separate process held to l, writing the SCIP index to
// out. A run that makes no index returns a *RunError saying which limit
// stopped it or how it failed, and removes out; a run stopped by ctx
// returns ctx's error.
func (r Runner) Run(ctx context.Context, p Project, dir, out string, l Limits) (RunStats, error) {
	l = l.orDefaults()
	j := job{name: p.Indexer, root: p.Root, rlimitAS: p.Language == Go}
	dir, err := filepath.Abs(dir)
	if err == nil {
		j.out, err = filepath.Abs(out)
	}
	if err != nil {
		return RunStats{}, fmt.Errorf("sciprun: %w", err)
	}
	tmp, err := os.MkdirTemp("", "sciprun-*")
	if err != nil {
		return RunStats{}, fmt.Errorf("sciprun: scratch folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	exe, err := r.executable(p, l)
	if err != nil {
		return RunStats{}, j.fail(ErrUnavailable, err.Error(), "")
	}
	argv, env, err := arguments(p, exe, dir, j.out, tmp, l)
	if err != nil {
		return RunStats{}, fmt.Errorf("sciprun: prepare %s: %w", p.Indexer, err)
	}
	return r.limited(ctx, j, argv, env, tmp, l)
}

// Exec runs argv, a Go program of this installation that writes the file
// out (such as the binary's own subcommand that converts an index), as Run
// runs the Go indexer: a separate process held to l, at the Runner's
// niceness, with the indexer's environment; name names it in errors.
func (r Runner) Exec(ctx context.Context, name string, argv []string, out string, l Limits) (RunStats, error) {
	l = l.orDefaults()
	j := job{name: name, rlimitAS: true}
	var err error
	if j.out, err = filepath.Abs(out); err != nil {
		return RunStats{}, fmt.Errorf("sciprun: %w", err)
	}
	if len(argv) == 0 {
		return RunStats{}, j.fail(ErrUnavailable, "no command was given", "")
	}
	tmp, err := os.MkdirTemp("", "sciprun-*")
	if err != nil {
		return RunStats{}, fmt.Errorf("sciprun: scratch folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	env, err := environment(tmp)
	if err != nil {
		return RunStats{}, err
	}
	return r.limited(ctx, j, argv, append(env, goEnvironment(l)...), tmp, l)
}

// job is what a run makes: its name and project root for errors, the
// file it writes, and whether its memory is held by RLIMIT_AS where no
// cgroup holds it (a Go program's).
type job struct {
	name, root, out string
	rlimitAS        bool
}

func (j job) fail(kind error, detail, output string) error {
	return &RunError{Indexer: j.name, Root: j.root, Kind: kind, Detail: detail, Output: output}
}

// String names the run: "goscip on ." ("precise-convert" for one of no
// project).
func (j job) String() string {
	if j.root == "" {
		return j.name
	}
	return j.name + " on " + j.root
}

// limited runs argv in tmp held to l and says how it ended (see Run).
func (r Runner) limited(ctx context.Context, j job, argv, env []string, tmp string, l Limits) (RunStats, error) {
	runCtx, cancel := context.WithTimeout(ctx, l.Time)
	defer cancel()
	began := time.Now()
	res, err := runLimited(runCtx, argv, env, tmp, l, r.Nice, j.rlimitAS)
	if err != nil {
		return RunStats{}, fmt.Errorf("sciprun: run %v: %w", j, err)
	}
	stats := RunStats{Duration: time.Since(began), PeakRSS: res.peakRSS, Memory: res.memory}
	if fi, err := os.Stat(j.out); err == nil {
		stats.OutputBytes = fi.Size()
	}
	if ctx.Err() != nil {
		os.Remove(j.out)
		return stats, fmt.Errorf("sciprun: %v: %w", j, ctx.Err())
	}
	if kind, detail := verdict(runCtx, res, stats, l); kind != nil {
		os.Remove(j.out)
		return stats, j.fail(kind, detail, res.output)
	}
	return stats, nil
}

// result is how an indexer process ended.
type result struct {
	success      bool
	exit         string // "exit status 1", "signal: killed"
	output       string // the last of its stdout and stderr
	peakRSS      int64
	memory       string // how its memory was held (RunStats.Memory)
	oomKilled    bool   // the memory cgroup's OOM killer killed a process of it
	fileTooLarge bool   // killed by SIGXFSZ: it wrote past RLIMIT_FSIZE
}

// verdict says why a run that ended as res made no index, or nil when it
// made one.
func verdict(runCtx context.Context, res result, stats RunStats, l Limits) (kind error, detail string) {
	switch {
	case res.success && stats.OutputBytes > 0 && stats.OutputBytes <= l.OutputBytes:
		return nil, "" // whatever else happened, the indexer says it finished
	case runCtx.Err() != nil:
		return ErrTimeLimit, "killed after " + l.Time.String()
	case res.oomKilled || (!res.success && outOfMemory(res)):
		return ErrMemoryLimit, fmt.Sprintf("over %s (%s)", size(l.MemoryBytes), res.memory)
	case res.fileTooLarge || stats.OutputBytes > l.OutputBytes:
		return ErrOutputLimit, "the index passed " + size(l.OutputBytes)
	case !res.success:
		return ErrFailed, res.exit
	case stats.OutputBytes == 0:
		return ErrFailed, "it wrote no index"
	}
	return nil, ""
}

// outOfMemory reports whether a run that failed ran out of memory, as its
// output says: Go's runtime ("fatal error: runtime: out of memory"), V8
// ("JavaScript heap out of memory"), or, for a Go program linked with cgo
// held by RLIMIT_AS, the runtime finding no address space for a thread's
// stack ("runtime/cgo: pthread_create failed").
func outOfMemory(res result) bool {
	output := strings.ToLower(res.output)
	return strings.Contains(output, "out of memory") ||
		res.memory == "RLIMIT_AS" && strings.Contains(output, "pthread_create failed")
}

// size formats n bytes for a message.
func size(n int64) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return fmt.Sprintf("%d GB", n>>30)
	}
	return fmt.Sprintf("%d MB", (n+(1<<20)-1)>>20)
}
