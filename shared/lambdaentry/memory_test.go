package lambdaentry_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestNavigateHeapAfterPushes: a navigation function serving a repository
// through three pushes in a row holds one snapshot and its symbol table,
// not every one it has served: its live heap after the third push is
// within a tenth of what it was after the first.
//
// The heap is the runtime's own figure: with GODEBUG=gctrace=1 each
// garbage collection prints the bytes it marked live (the third of
// "A->B->C MB"), what the process holds reachable whatever the operating
// system's RSS says (freed pages go back to the system lazily, so RSS
// after a push need not drop). GOGC=10 makes collections come every few
// calls (it changes when they run, not what they find live); after each
// push, once the new snapshot's table is built (and saved, its buffers
// garbage), the test calls until two collections have finished and takes
// the last one's figure.
//
// The functions are frozen between calls and run at their CPU share, as
// on Lambda: a table is built by the calls that read it, so the test
// calls until an answer says it is (the count of calls is logged); by
// then the table's work is done (saved, for find_symbols), nothing being
// left for after the answer, when the function is frozen.
func TestNavigateHeapAfterPushes(t *testing.T) {
	d := newDeployment(t)
	d.S3(t)
	s3 := &repotest.S3{Moto: d.Moto, Bucket: d.Bucket}
	dir := goSourceTree(t)
	// In this order, after each push: find_symbols's function builds the
	// snapshot's symbol table and saves it in the bucket; find_references's
	// reads it from there.
	fns := []struct {
		tool  string
		until []string // in the answer to a call naming the pushed constant, once the table has it
		built string   // in the output, once per push, when the table's work is done
		probe string   // a call that allocates enough to bring collections
		fn    *lambdatest.Function
		heap  []int // MB, after each push
	}{
		{tool: "find_symbols", until: []string{`"path":"push.go"`, `"state":"ready"`}, built: `"msg":"symbols: table saved"`,
			probe: `{"name":"err","match":"substring","caseSensitive":false,"limit":200}`},
		{tool: "find_references", until: []string{`"definition":"constant"`}, built: `"msg":"symbols: table updated"`,
			probe: `{"name":"err","limit":200}`},
	}
	for i := range fns {
		cfg := d.ToolConfig(t, fns[i].tool)
		cfg.Env["GODEBUG"] = "gctrace=1"
		cfg.Env["GOGC"] = "10"
		cfg.Env[config.RepoRefresh.Name()] = "100ms"
		cfg.VCPU = lambdatest.VCPUOf(cfg.MemoryMB)
		fns[i].fn = d.Start(t, cfg)
	}
	for push := 1; push <= 3; push++ {
		// Each push is a commit of its own of the same tree, one file
		// changed.
		name := fmt.Sprintf("Pushed%d", push)
		if err := os.WriteFile(filepath.Join(dir, "push.go"), fmt.Appendf(nil, "package push\n\nconst %s = %d\n", name, push), 0o644); err != nil {
			t.Fatal(err)
		}
		s3.Publish(t, "acme", fmt.Sprintf("c%d", push), dir)
		for i := range fns {
			f := &fns[i]
			calls := callUntil(t, f.fn, f.tool, `{"name":"`+name+`"}`, f.until)
			t.Logf("%s: push %d: the table built after %d calls", f.tool, push, calls)
			waitOutputCount(t, f.fn, f.built, push)
			f.heap = append(f.heap, settledHeapMB(t, f.fn, f.tool, f.probe))
		}
	}
	for _, f := range fns {
		t.Logf("%s: live heap after push 1, 2, 3: %v MB", f.tool, f.heap)
		if float64(f.heap[2]) > 1.10*float64(f.heap[0]) {
			t.Errorf("%s: the live heap grew from %d MB after the first push to %d MB after the third", f.tool, f.heap[0], f.heap[2])
		}
	}
}

// goSourceTree copies the non-test Go files of the Go source tree outside
// cmd/ (about 2,900 files, 30 MB) into a new folder: a repository of a
// realistic size.
func goSourceTree(t *testing.T) string {
	t.Helper()
	src := filepath.Join(runtime.GOROOT(), "src")
	var pkgs []string
	err := filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		switch {
		case rel == "cmd" || e.Name() == "testdata" || e.Name() == "vendor":
			return filepath.SkipDir
		case rel != ".":
			pkgs = append(pkgs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return repotest.GoPackages(t, pkgs...)
}

// callUntil calls tool on fn, as an agent would, until its answer
// contains every string of want (the function reads a push within its
// refresh interval, and its calls build the new snapshot's symbol table,
// a slice each); it returns how many calls it made. Every call must
// answer within its deadline.
func callUntil(t *testing.T, fn *lambdatest.Function, tool, args string, want []string) int {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for i := 1; ; i++ {
		resp := invoke(t, fn, directEvent(tool, args, "acme", fmt.Sprint("until-", i)))
		if resp.FunctionError != "" || strings.Contains(string(resp.Payload), `"code":"TIMEOUT"`) {
			t.Fatalf("%s %s: call %d did not answer in time: %s %s", tool, args, i, resp.ErrorType, resp.Payload)
		}
		if !slices.ContainsFunc(want, func(w string) bool { return !strings.Contains(string(resp.Payload), w) }) {
			return i
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s: no %q in %s", tool, args, want, resp.Payload)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitOutputCount waits, calling nothing (the function is frozen), until
// fn's output holds s n times: what it wrote before its last answer.
func waitOutputCount(t *testing.T, fn *lambdatest.Function, s string, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for strings.Count(fn.Output(), s) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s is not %d times in the output:\n%s", fn.Name, s, n, fn.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// gcTrace matches a line of the runtime's GC trace: the cycle's number
// and the heap it marked live, in MB.
var gcTrace = regexp.MustCompile(`(?m)^gc (\d+) @.* \d+->\d+->(\d+) MB, `)

// lastGC returns the number of the last collection fn's GC trace shows
// and the heap it marked live, in MB (0, 0 before any).
func lastGC(fn *lambdatest.Function) (cycle, liveMB int) {
	all := gcTrace.FindAllStringSubmatch(fn.Output(), -1)
	if len(all) == 0 {
		return 0, 0
	}
	last := all[len(all)-1]
	cycle, _ = strconv.Atoi(last[1])
	liveMB, _ = strconv.Atoi(last[2])
	return cycle, liveMB
}

// settledHeapMB calls tool with args until two collections have finished
// since it began, and returns the live heap the last one found.
func settledHeapMB(t *testing.T, fn *lambdatest.Function, tool, args string) int {
	t.Helper()
	from, _ := lastGC(fn)
	for i := range 500 {
		invoke(t, fn, directEvent(tool, args, "acme", fmt.Sprint("probe-", i)))
		if cycle, live := lastGC(fn); cycle >= from+2 {
			return live
		}
	}
	t.Fatalf("%s: no two collections in 500 calls of %s %s", fn.Name, tool, args)
	return 0
}
