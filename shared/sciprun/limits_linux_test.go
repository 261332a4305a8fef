package sciprun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/proclimit"
)

// goProject is the project the Go indexer stand-in is run on.
var goProject = Project{Language: Go, Root: ".", Indexer: "goscip", Config: "go.mod"}

// machineGroup says which memory cgroup this machine lets a run make
// ("cgroup v1", "cgroup v2"), or "" when none.
func machineGroup() string {
	g := newMemoryGroup(1 << 30)
	if g == nil {
		return ""
	}
	defer g.Remove()
	return g.Kind()
}

// withoutCgroups makes the runs of t find no memory cgroup, as on a
// machine that allows none.
func withoutCgroups(t *testing.T) {
	old := proclimit.FS
	proclimit.FS = t.TempDir()
	t.Cleanup(func() { proclimit.FS = old })
}

// TestRunGoIndexer runs the Go indexer's command line as given, with
// "-o FILE DIR" added, and keeps the index it writes.
func TestRunGoIndexer(t *testing.T) {
	out := filepath.Join(t.TempDir(), "index.scip")
	stats, err := standinRunner(t, "scip").Run(context.Background(), goProject, t.TempDir(), out, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "def `example.com/standin`/main(). main.go:3"; !slices.Contains(indexFacts(t, out), want) {
		t.Errorf("the index lacks %q", want)
	}
	if stats.OutputBytes == 0 || stats.PeakRSS == 0 {
		t.Errorf("stats = %+v, want the index's size and the peak RSS", stats)
	}
}

// limitCase is a run of TestRunLimits.
type limitCase struct {
	name     string
	mode     string // the Go stand-in's, or the node stand-in's project folder
	node     bool   // run the node stand-in (fake-node-modules' scip-typescript)
	noCgroup bool
	limits   Limits
	want     error
	says     []string // what the error says
}

// TestRunLimits runs stand-ins that break each limit: each run ends in an
// error naming the limit (and how memory was held), and leaves no index.
func TestRunLimits(t *testing.T) {
	group := machineGroup()
	t.Logf("this machine's memory cgroup: %q", group)
	fake, err := filepath.Abs(filepath.Join("testdata", "fake-node-modules"))
	if err != nil {
		t.Fatal(err)
	}
	const mb = 1 << 20
	tests := []limitCase{
		{"time", "sleep", false, false, Limits{Time: 500 * time.Millisecond}, ErrTimeLimit, []string{"time limit: killed after 500ms"}},
		{"memory, Go", "hog", false, false, Limits{MemoryBytes: 256 * mb}, ErrMemoryLimit, []string{"memory limit: over 256 MB (" + or(group, "RLIMIT_AS") + ")"}},
		// Past RLIMIT_AS, Go's runtime finds no memory for the heap, or
		// (cgo's) none for a thread's stack.
		{"memory, Go, without cgroup", "hog", false, true, Limits{MemoryBytes: 256 * mb}, ErrMemoryLimit, []string{"over 256 MB (RLIMIT_AS)", "out of memory|pthread_create failed"}},
		{"memory, node heap", "heap", true, true, Limits{MemoryBytes: 256 * mb}, ErrMemoryLimit, []string{"over 256 MB (V8 heap limit)", "heap out of memory"}},
		{"output", "flood", false, false, Limits{OutputBytes: 8 * mb}, ErrOutputLimit, []string{"output limit: the index passed 8 MB"}},
		{"crash", "crash", false, false, Limits{}, ErrFailed, []string{"failed: exit status 2", "panic: stand-in crash"}},
	}
	if group != "" {
		// Outside V8's heap, only a cgroup holds node.
		tests = append(tests, limitCase{"memory, node buffers", "buffers", true, false, Limits{MemoryBytes: 256 * mb}, ErrMemoryLimit, []string{"over 256 MB (" + group + ")"}})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.noCgroup {
				withoutCgroups(t)
			}
			r, p, dir := standinRunner(t, tc.mode), goProject, t.TempDir()
			if tc.node {
				r = Runner{NodeModules: fake}
				p = Project{Language: TypeScript, Root: ".", Indexer: "scip-typescript", Config: "tsconfig.json"}
				dir = filepath.Join(dir, tc.mode)
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(t.TempDir(), "index.scip")
			stats, err := r.Run(context.Background(), p, dir, out, tc.limits)
			t.Logf("%v (after %s, peak RSS %d MB)", err, stats.Duration, stats.PeakRSS>>20)
			var runErr *RunError
			if !errors.Is(err, tc.want) || !errors.As(err, &runErr) {
				t.Fatalf("Run: %v, want a RunError of %v", err, tc.want)
			}
			for _, s := range tc.says { // each, or one of its |-separated forms
				if !slices.ContainsFunc(strings.Split(s, "|"), func(s string) bool { return strings.Contains(err.Error(), s) }) {
					t.Errorf("the error does not say %q", s)
				}
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a failed run left its output: %v", err)
			}
		})
	}
}

// TestRunKillsWhatIsLeft runs a stand-in that starts a child and exits:
// the child dies with the run, in the indexer's process group (with or
// without a memory cgroup) or, with a cgroup, outside it (a child that
// made a session of its own).
func TestRunKillsWhatIsLeft(t *testing.T) {
	tests := []struct {
		mode     string
		noCgroup bool
	}{{"fork", true}, {"fork", false}}
	if machineGroup() != "" {
		tests = append(tests, struct {
			mode     string
			noCgroup bool
		}{"escape", false})
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s, cgroup %v", tc.mode, !tc.noCgroup), func(t *testing.T) {
			if tc.noCgroup {
				withoutCgroups(t)
			}
			dir := t.TempDir()
			out := filepath.Join(t.TempDir(), "index.scip")
			if _, err := standinRunner(t, tc.mode).Run(context.Background(), goProject, dir, out, Limits{}); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(dir, "child.pid"))
			if err != nil {
				t.Fatal(err)
			}
			pid, _ := strconv.Atoi(string(data))
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }) // should the test fail
			// SIGKILL was sent before Run returned; its delivery may take a moment.
			for deadline := time.Now().Add(10 * time.Second); alive(pid) && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if alive(pid) {
				t.Errorf("the indexer's child %d outlived it", pid)
			}
		})
	}
}

// alive reports whether process pid runs (a zombie has ended).
func alive(pid int) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(data)
	state := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(state) > 0 && state[0] != "Z" && state[0] != "X"
}

// TestRunEnvironment checks what an indexer is given: none of this
// process's variables but PATH's absolute folders, HOME and caches of its
// own, the Go settings that keep the go command offline and off the
// repository's toolchain, no stdin, the Runner's niceness and the
// project's package patterns.
func TestRunEnvironment(t *testing.T) {
	for _, v := range []string{"AWS_SECRET_ACCESS_KEY", "TOOLSHED_BUCKET", "GITHUB_TOKEN", "NODE_OPTIONS"} {
		t.Setenv(v, "leaked")
	}
	t.Setenv("PATH", "relative/bin"+string(filepath.ListSeparator)+os.Getenv("PATH"))
	out := filepath.Join(t.TempDir(), "env")
	r := standinRunner(t, "env")
	r.Nice = 10
	p := goProject
	p.Packages = []string{"./net/http", "./cmd/go"}
	if _, err := r.Run(context.Background(), p, t.TempDir(), out, Limits{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	env := strings.Split(string(data), "\n")
	for _, v := range env {
		if strings.Contains(v, "leaked") || strings.Contains(v, "relative/bin") {
			t.Errorf("the indexer was given %s", v)
		}
	}
	home, _ := os.UserHomeDir()
	for _, want := range []string{"GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local",
		"CGO_ENABLED=0", "npm_config_ignore_scripts=true", "GOMEMLIMIT=1610612736", "STDIN=" + os.DevNull,
		"NICE=10", "PATTERNS=./net/http ./cmd/go"} {
		if !slices.Contains(env, want) {
			t.Errorf("the indexer was not given %s: %q", want, env)
		}
	}
	for _, v := range env {
		if h, ok := strings.CutPrefix(v, "HOME="); ok && (h == home || !strings.Contains(h, "sciprun-")) {
			t.Errorf("HOME=%s, want the run's own", h)
		}
	}
}

// TestPeakRSSIsTheIndexers: the peak RSS of a run is the indexer's own,
// however large the process that ran it is. (wait4's rusage counted the
// starter's memory: Go starts a child sharing it until exec, and a
// server of 1 GB saw every indexer peak at 1 GB.)
func TestPeakRSSIsTheIndexers(t *testing.T) {
	held := make([]byte, 512<<20)
	for i := 0; i < len(held); i += 4096 {
		held[i] = 1
	}
	stats, err := standinRunner(t, "scip").Run(context.Background(), goProject, t.TempDir(), filepath.Join(t.TempDir(), "index.scip"), Limits{})
	runtime.KeepAlive(held)
	if err != nil {
		t.Fatal(err)
	}
	if stats.PeakRSS == 0 || stats.PeakRSS > 256<<20 {
		t.Errorf("peak RSS %d MB, want the stand-in's (a few MB), not this test's (over 512 MB)", stats.PeakRSS>>20)
	}
}

// TestExec runs a program of the installation as the Go indexer is run:
// niced, held to the limits, its output kept; one that fails is a
// RunError named as asked, whose output it kept.
func TestExec(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r := Runner{Nice: 7}
	out := filepath.Join(t.TempDir(), "env")
	if _, err := r.Exec(context.Background(), "convert", []string{self, "standin", "env", "-o", out, t.TempDir()}, out, Limits{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if env := strings.Split(string(data), "\n"); err != nil || !slices.Contains(env, "NICE=7") || !slices.Contains(env, "GOPROXY=off") {
		t.Errorf("the program was given %q (%v)", env, err)
	}
	_, err = r.Exec(context.Background(), "convert", []string{self, "standin", "crash", "-o", out, t.TempDir()}, out, Limits{})
	var run *RunError
	if !errors.As(err, &run) || !errors.Is(err, ErrFailed) || !strings.HasPrefix(err.Error(), "convert: failed: exit status 2") || !strings.Contains(run.Output, "stand-in crash") {
		t.Errorf("a crash: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed run left its output: %v", err)
	}
}
