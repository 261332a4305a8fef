// Command historycheck compares the history tools with the git program on
// a real repository's history, and measures both (make bench-history).
//
//	go run ./scripts/historycheck -repo ~/src/git        # the check
//	go run ./scripts/historycheck -repo ~/src/git -bench # p50s side by side
//
// The check samples commits across the history and, for each, asks the
// tools through the real pipeline and git for the same thing: list_commits
// of a file the commit changed (git log), get_commit's files, counts and
// hunks (git show --first-parent), compare with the commit 100 before (git
// diff), blame of a file (git blame --porcelain) and read_file at the
// commit (git show REV:PATH); and search_commits of a few words against
// git log -G. Paths the repository's policy denies are
// left out of both sides. It prints each difference and exits 1 on any.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/testenv/standalone"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/toolset"
	"github.com/toolshed/toolshed/shared/wiring"
)

func main() {
	dir := flag.String("repo", "", "a git working tree with a long history (required)")
	samples := flag.Int("samples", 40, "commits the check samples")
	bench := flag.Bool("bench", false, "measure p50s next to git instead of checking")
	runs := flag.Int("runs", 7, "runs per measurement")
	harness := flag.Bool("harness", false, "push the repository with its history to the Lambda harness and call the deployed functions (through the gateway) instead of the local pipeline")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "usage: historycheck -repo DIR [-samples N] [-bench [-runs N]] [-harness]")
		os.Exit(2)
	}
	run := func(c *checker) error {
		if *bench {
			return c.bench(*runs)
		}
		return c.check(*samples)
	}
	var err error
	if *harness {
		err = standalone.RunStderr(func(tb testing.TB) error {
			c, err := newHarnessChecker(tb, *dir)
			if err != nil {
				return err
			}
			defer c.close()
			return run(c)
		})
	} else {
		var c *checker
		if c, err = newChecker(*dir); err == nil {
			defer c.close()
			err = run(c)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// checker calls the tools over one repository, and git in it.
type checker struct {
	dir    string
	invoke invoker
	via    string // how the tools are called, for the bench's heading
	close  func() error
	diffs  int
}

// invoker calls one tool and returns its result, or an error with its
// code and message.
type invoker func(tool string, args []byte) (json.RawMessage, error)

func newChecker(dir string) (*checker, error) {
	data, err := os.MkdirTemp("", "historycheck")
	if err != nil {
		return nil, err
	}
	db, err := boltstore.Open(filepath.Join(data, "check.db"))
	if err != nil {
		return nil, err
	}
	env := wiring.NewEnv(config.Config{DataDir: data, Repos: []string{dir}}, nil).UseStores(db.Stores(), db.Close)
	names := []string{"list_commits", "get_commit", "compare", "blame", "read_file", "search_commits", "grep_codebase"}
	tools, err := family.Build(context.Background(), toolset.Families, env, names...)
	if err != nil {
		return nil, err
	}
	limits := map[string]int{}
	for _, n := range names {
		limits[n] = 1 << 30
	}
	p, err := wiring.Pipeline(tools, wiring.PipelineOptions{RateLimits: limits, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	invoke := func(tool string, args []byte) (json.RawMessage, error) {
		o := p.Invoke(context.Background(), toolkit.Request{Tool: tool, Args: args, Tenant: "check", RequestID: "check"})
		if !o.OK {
			return nil, fmt.Errorf("%s %s", o.Error.Code, o.Error.Message)
		}
		return o.Result, nil
	}
	return &checker{dir: dir, invoke: invoke, via: "through the pipeline",
		close: func() error { env.Close(); return os.RemoveAll(data) }}, nil
}

// call calls a tool and decodes its result into out.
func (c *checker) call(tool string, args map[string]any, out any) error {
	raw, _ := json.Marshal(args)
	result, err := c.invoke(tool, raw)
	if err != nil {
		return fmt.Errorf("%s %s: %w", tool, raw, err)
	}
	return json.Unmarshal(result, out)
}

// git runs git in the repository and returns its output.
func (c *checker) git(args ...string) string {
	cmd := exec.Command("git", append([]string{"-C", c.dir, "-c", "core.quotePath=false"}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "git %s: %v\n", strings.Join(args, " "), err)
	}
	return string(out)
}

// differ records a difference.
func (c *checker) differ(format string, args ...any) {
	c.diffs++
	fmt.Printf("DIFF "+format+"\n", args...)
}
