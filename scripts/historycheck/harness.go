package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/deploytest"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
)

// harnessTenant is the tenant whose snapshot the harness check pushes.
const harnessTenant = "check"

// maxRetries bounds the calls a tool answering TIMEOUT (its function still
// copying the history into /tmp, which it says is retriable) is given.
const maxRetries = 30

// newHarnessChecker pushes dir's snapshot with its history
// (scripts/snapshot push, as a user does) to the Lambda harness's bucket
// and returns a checker whose calls go the way a remote agent's do:
// through the HTTP API, the authorizer and the gateway to the deployed
// functions (the history function, read_file's and grep_codebase's), each
// with its memory enforced and frozen between calls (deploytest). A call
// answered TIMEOUT while its function copies the history is made again,
// as an agent retries; each function's first answer is reported.
func newHarnessChecker(tb testing.TB, dir string) (*checker, error) {
	work := tb.TempDir()
	boot := filepath.Join(work, "bootstraps")
	if err := deploytest.BuildBootstraps(boot, "historycheck"); err != nil {
		return nil, err
	}
	cli, err := deploytest.BuildSnapshotCLI(work)
	if err != nil {
		return nil, err
	}
	stack := deploytest.New(tb, boot)
	start := time.Now()
	out, err := stack.SnapshotPush(tb, cli, "-tenant", harnessTenant, "-dir", dir, "-index=false").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("push: %v\n%s", err, out)
	}
	fmt.Fprintf(os.Stderr, "pushed %s with its history in %.1f s:\n%s", dir, time.Since(start).Seconds(), out)
	tools := []string{"list_commits", "get_commit", "compare", "blame", "search_commits", "read_file", "grep_codebase"}
	fns := map[string]measured{}
	for _, t := range tools {
		fns[deploytest.ToolFunctionName(t)] = measured{stack.Tool(tb, t), stack.ToolConfig(tb, t).MemoryMB}
	}
	api := stack.AgentAPI(tb, tools)
	h := &harnessCalls{tb: tb, api: api, first: map[string]bool{}}
	return &checker{dir: dir, invoke: h.invoke, via: "through the Lambda harness and the gateway",
		close: func() error { reportPeaks(fns); return nil }}, nil
}

// harnessCalls makes the checker's calls through the agent's path.
type harnessCalls struct {
	tb    testing.TB
	api   *deploytest.AgentAPI
	first map[string]bool // the functions that have answered
}

func (h *harnessCalls) invoke(tool string, args []byte) (json.RawMessage, error) {
	fn := deploytest.ToolFunctionName(tool)
	var waited time.Duration
	for try := 1; ; try++ {
		a, took := h.api.Call(h.tb, tool, string(args), harnessTenant)
		waited += took
		if a.Code == "TIMEOUT" && try < maxRetries {
			continue
		}
		if !h.first[fn] {
			h.first[fn] = true
			fmt.Fprintf(os.Stderr, "%s: first answer (%s) after %d call(s), %.2f s in all\n", fn, orOK(a.Code), try, waited.Seconds())
		}
		if a.Code != "" {
			return nil, fmt.Errorf("%s", a.Code)
		}
		return a.Result, nil
	}
}

// reportPeaks prints each function's peak memory (its processes, git's
// included, page cache too) and its bootstrap's peak RSS, against its
// memory.
func reportPeaks(fns map[string]measured) {
	for name, fn := range fns {
		rss, err1 := fn.PeakRSS()
		all, err2 := fn.PeakMemory()
		if err1 != nil || err2 != nil {
			fmt.Fprintf(os.Stderr, "%s: peak memory unknown: %v %v\n", name, err1, err2)
			continue
		}
		fmt.Fprintf(os.Stderr, "%s: peak %d MiB in all, bootstrap RSS %d MiB, of %d MB\n", name, all>>20, rss>>20, fn.memoryMB)
	}
}

// measured is a function and its memory setting.
type measured struct {
	*lambdatest.Function
	memoryMB int
}

func orOK(code string) string {
	if code == "" {
		return "ok"
	}
	return code
}
