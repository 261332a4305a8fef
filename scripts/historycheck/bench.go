package main

import (
	"fmt"
	"os/exec"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/latency"
)

// measurement is one operation, done by a tool and by git.
type measurement struct {
	name string
	tool func() error
	git  []string
}

// bench prints, for each operation, the p50 of runs of the tool (through
// the pipeline) and of the git program doing the same.
func (c *checker) bench(runs int) error {
	path := "color.c" // 500 lines in git.git; -path would be a flag if another repository needed one
	var sink any
	ms := []measurement{
		{"log of a path (100 commits)", func() error {
			return c.call("list_commits", map[string]any{"path": path, "limit": 100}, &sink)
		}, []string{"log", "--format=%H%P%an%ae%aI%s", "--numstat", "-M", "--diff-merges=first-parent", "-n", "100", "HEAD", "--", path}},
		{"blame of a 500-line file", func() error {
			// The working tree's file: blames of a commit are kept, and
			// would be measured once.
			return c.call("blame", map[string]any{"path": path}, &sink)
		}, []string{"blame", "--porcelain", "-M", "--", path}},
		{"get_commit", func() error {
			return c.call("get_commit", map[string]any{"commit": "HEAD~1", "limit": 50}, &sink)
		}, []string{"show", "--first-parent", "-M", "HEAD~1"}},
		{"compare across 100 commits", func() error {
			return c.call("compare", map[string]any{"base": "HEAD~100", "head": "HEAD", "limit": 50}, &sink)
		}, []string{"diff", "-M", "HEAD~100", "HEAD"}},
	}
	fmt.Printf("%s, %d runs each: p50 of the tool (through the pipeline) and of git\n", c.dir, runs)
	fmt.Printf("%-30s %12s %12s %8s\n", "operation", "tool", "git", "ratio")
	for _, m := range ms {
		tool, err := p50(runs, m.tool)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		git, err := p50(runs, func() error {
			return exec.Command("git", append([]string{"-C", c.dir}, m.git...)...).Run()
		})
		if err != nil {
			return fmt.Errorf("%s: git: %w", m.name, err)
		}
		fmt.Printf("%-30s %9s ms %9s ms %7.2fx\n", m.name, latency.Ms(tool), latency.Ms(git), float64(tool)/float64(git))
	}
	return nil
}

// p50 runs fn runs times and returns the median duration.
func p50(runs int, fn func() error) (time.Duration, error) {
	var ds []time.Duration
	for range runs {
		start := time.Now()
		if err := fn(); err != nil {
			return 0, err
		}
		ds = append(ds, time.Since(start))
	}
	return latency.Percentile(ds, 50), nil
}
