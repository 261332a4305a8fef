package grep_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/grep"
)

// TestTimeoutLeavesNothingRunning: pathological patterns over a
// repository large enough to take far longer than the deadline answer
// TIMEOUT (or a complete result), and when the answer comes no goroutine
// of the search, the walk or the tool is still working: nothing burns CPU
// for an answer nobody reads.
func TestTimeoutLeavesNothingRunning(t *testing.T) {
	files := map[string]string{}
	line := "aaaa bbbb (cccc) [dddd] x = y + z; // some ordinary text here\n"
	for i := range 40 {
		files[fmt.Sprintf("src/f%02d.txt", i)] = strings.Repeat(line, 1600) // 100 KB each, 4 MB in all
	}
	src := repotest.Local(t, repotest.WriteDir(t, files))
	h := harness(t, src)
	// A 200-character alternation of branches without a literal to look for.
	alternation := "[a-c]x0"
	for i := 1; len(alternation)+len(fmt.Sprintf("|[a-c]x%d", i)) <= 200; i++ {
		alternation += fmt.Sprintf("|[a-c]x%d", i)
	}
	patterns := []string{
		`(?s).*q`,
		`((.*)(.*)(.*)(.*))+q`,
		`(a|aa)*q`,
		alternation,
	}
	// Warm the view, then search under a deadline far below the work.
	h.OK(t, tenant, grep.Tool, `{"pattern":"ordinary"}`, nil)
	for _, p := range patterns {
		args, _ := json.Marshal(map[string]any{"pattern": p})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		o := h.CallContext(ctx, tenant, grep.Tool, string(args))
		cancel()
		if !o.OK && o.Error.Code != toolerr.Timeout {
			t.Errorf("%s: %+v, want a result or TIMEOUT", p, o.Error)
		}
		if n := working(); n != 0 {
			t.Errorf("%s: %d goroutines still working after the answer:\n%s", p, n, stacks())
		}
	}
}

// working counts the goroutines in the search, the repository view's
// request path or the tool.
func working() int {
	n := 0
	for _, g := range strings.Split(stacks(), "\n\n") {
		if strings.Contains(g, "shared/textsearch.") || strings.Contains(g, "shared/tools/grep.") ||
			strings.Contains(g, "repo.(*Local).Searchable") {
			n++
		}
	}
	return n
}

func stacks() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}
