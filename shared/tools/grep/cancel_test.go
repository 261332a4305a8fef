package grep_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/textsearch"
	"github.com/toolshed/toolshed/shared/tools/grep"
)

// TestTimeoutLeavesNothingRunning: pathological patterns over a
// repository large enough to take far longer than the deadline answer with
// what they found by then (incomplete, counts as lower bounds) or a
// complete result, never TIMEOUT; and when the answer comes no goroutine of
// the search, the walk or the tool is still working: nothing burns CPU for
// an answer nobody reads.
func TestTimeoutLeavesNothingRunning(t *testing.T) {
	files := map[string]string{}
	line := "aaaa bbbb (cccc) [dddd] x = y + z; // some ordinary text here\n"
	for i := range 200 {
		files[fmt.Sprintf("src/f%03d.txt", i)] = strings.Repeat(line, 1600) // 100 KB each, 20 MB in all
	}
	src := repotest.Local(t, repotest.WriteDir(t, files))
	h := harness(t, src)
	// A 200-character alternation of branches without a literal to look for.
	alternation := "[a-c]x0"
	for i := 1; len(alternation)+len(fmt.Sprintf("|[a-c]x%d", i)) <= 200; i++ {
		alternation += fmt.Sprintf("|[a-c]x%d", i)
	}
	patterns := []struct {
		pattern string
		matches bool // every line holds a match
	}{
		{`(?s).*`, true},
		{`.`, true},
		{`(?s).*q`, false},
		{`((.*)(.*)(.*)(.*))+q`, false},
		{`(a|aa)*q`, false},
		{alternation, false},
	}
	// Warm the view, then search under a deadline far below the work.
	h.OK(t, tenant, grep.Tool, `{"pattern":"ordinary"}`, nil)
	incomplete := 0
	for _, p := range patterns {
		args, _ := json.Marshal(map[string]any{"pattern": p.pattern, "limit": 1})
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Millisecond)
		o := h.CallContext(ctx, tenant, grep.Tool, string(args))
		cancel()
		if !o.OK {
			t.Errorf("%s: %+v, want what the search found", p.pattern, o.Error)
			continue
		}
		var out struct {
			Matches       []json.RawMessage
			TotalMatches  int
			FilesSearched int
			Incomplete    bool
			Message       string
		}
		if err := json.Unmarshal(o.Result, &out); err != nil {
			t.Fatal(err)
		}
		if out.Incomplete {
			incomplete++
			if !strings.Contains(out.Message, "lower bounds") || out.FilesSearched >= len(files) {
				t.Errorf("%s: incomplete after %d files with the message %q", p.pattern, out.FilesSearched, out.Message)
			}
		}
		if p.matches && (len(out.Matches) != 1 || out.TotalMatches < 1) {
			t.Errorf("%s: %d matches shown, %d counted; want the first found", p.pattern, len(out.Matches), out.TotalMatches)
		}
		if n := working(); n != 0 {
			t.Errorf("%s: %d goroutines still working after the answer:\n%s", p.pattern, n, stacks())
		}
	}
	if incomplete == 0 {
		t.Errorf("no search of 20 MB stopped at a 40 ms deadline: the test no longer tests the incomplete answer")
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

// TestAnswersWhileTheRepositoryLoads: a call that comes while a large
// snapshot is still being read answers, before its deadline, that
// nothing was searched yet (incomplete), instead of TIMEOUT.
func TestAnswersWhileTheRepositoryLoads(t *testing.T) {
	src := repotest.NewHeld(repotest.Local(t, repotest.WriteDir(t, map[string]string{"a.go": "package a\n"})))
	h := harness(t, src)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	o := h.CallContext(ctx, tenant, grep.Tool, `{"pattern":"package"}`)
	cancel()
	var out struct {
		Matches    []json.RawMessage
		Incomplete bool
		Message    string
	}
	if !o.OK || json.Unmarshal(o.Result, &out) != nil || !out.Incomplete || len(out.Matches) != 0 || !strings.Contains(out.Message, "still being read") {
		t.Errorf("while the repository loads: %+v %s", o.Error, o.Result)
	}
	close(src.Release)
	var after struct {
		Matches    []json.RawMessage
		Incomplete bool
	}
	h.OK(t, tenant, grep.Tool, `{"pattern":"package"}`, &after)
	if after.Incomplete || len(after.Matches) != 1 {
		t.Errorf("once read: %+v", after)
	}
}

// TestLimitIsMadeInFull: every match grep asks for is made even when its
// time has run out (textsearch.MadeInFull), so that an incomplete answer
// always means files left unsearched, as its message and contract say.
func TestLimitIsMadeInFull(t *testing.T) {
	raw, err := contracts.FS.ReadFile("grep_codebase.json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		InputSchema struct {
			Properties struct {
				Limit struct{ Maximum int } `json:"limit"`
			} `json:"properties"`
		} `json:"inputSchema"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	if max := c.InputSchema.Properties.Limit.Maximum; max < 1 || max > textsearch.MadeInFull {
		t.Errorf("grep_codebase's limit goes up to %d; Search makes %d in full", max, textsearch.MadeInFull)
	}
}
