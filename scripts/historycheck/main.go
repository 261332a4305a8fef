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

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/toolset"
	"github.com/toolshed/toolshed/shared/wiring"
)

func main() {
	dir := flag.String("repo", "", "a git working tree with a long history (required)")
	samples := flag.Int("samples", 40, "commits the check samples")
	bench := flag.Bool("bench", false, "measure p50s next to git instead of checking")
	runs := flag.Int("runs", 7, "runs per measurement")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "usage: historycheck -repo DIR [-samples N] [-bench [-runs N]]")
		os.Exit(2)
	}
	c, err := newChecker(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer c.close()
	if *bench {
		err = c.bench(*runs)
	} else {
		err = c.check(*samples)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// checker calls the tools over one repository, and git in it.
type checker struct {
	dir   string
	p     *toolkit.Pipeline
	close func() error
	diffs int
}

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
	return &checker{dir: dir, p: p, close: func() error { env.Close(); return os.RemoveAll(data) }}, nil
}

// call calls a tool and decodes its result into out.
func (c *checker) call(tool string, args map[string]any, out any) error {
	raw, _ := json.Marshal(args)
	o := c.p.Invoke(context.Background(), toolkit.Request{Tool: tool, Args: raw, Tenant: "check", RequestID: "check"})
	if !o.OK {
		return fmt.Errorf("%s %s: %s %s", tool, raw, o.Error.Code, o.Error.Message)
	}
	return json.Unmarshal(o.Result, out)
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
