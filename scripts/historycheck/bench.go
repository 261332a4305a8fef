package main

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/latency"
)

// measurement is one operation, done by a tool and by git. gitAt, when
// set, is the git command of run i (git is then unused): an operation at
// a revision runs each time at another one (HEAD~i), so that no run is
// answered from what an earlier one kept.
type measurement struct {
	name  string
	tool  func() error
	git   []string
	gitAt func(i int) []string
}

// bench prints, for each operation, the p50 of runs of the tool (through
// the pipeline) and of the git program doing the same.
func (c *checker) bench(runs int) error {
	path := "color.c" // 500 lines in git.git; -path would be a flag if another repository needed one
	var sink any
	readAt, grepAt := 0, 0 // the runs so far, each at a revision of its own (grep's from HEAD~101: not read_file's)
	// Blames are kept by (path, the commit that last changed it): each
	// run blames the file as another commit that changed it left it, so
	// none is answered from what an earlier run kept.
	changed := strings.Fields(c.git("log", "--format=%H", "-n", strconv.Itoa(runs+1), "HEAD", "--", path))
	blameAt := 0
	ms := []measurement{
		{"log of a path (100 commits)", func() error {
			return c.call("list_commits", map[string]any{"path": path, "limit": 100}, &sink)
		}, []string{"log", "--format=%H%P%an%ae%aI%s", "--numstat", "-M", "--diff-merges=first-parent", "-n", "100", "HEAD", "--", path}, nil},
		{"blame of a 500-line file", func() error {
			blameAt++
			return c.call("blame", map[string]any{"path": path, "ref": changed[blameAt%len(changed)]}, &sink)
		}, nil, func(i int) []string {
			return []string{"blame", "--porcelain", "-M", changed[i%len(changed)], "--", path}
		}},
		{"get_commit", func() error {
			return c.call("get_commit", map[string]any{"commit": "HEAD~1", "limit": 50}, &sink)
		}, []string{"show", "--first-parent", "-M", "HEAD~1"}, nil},
		{"compare across 100 commits", func() error {
			return c.call("compare", map[string]any{"base": "HEAD~100", "head": "HEAD", "limit": 50}, &sink)
		}, []string{"diff", "-M", "HEAD~100", "HEAD"}, nil},
		{"read_file at a ref", func() error {
			readAt++
			return c.call("read_file", map[string]any{"path": path, "ref": fmt.Sprintf("HEAD~%d", readAt)}, &sink)
		}, nil, func(i int) []string { return []string{"show", fmt.Sprintf("HEAD~%d:%s", i, path)} }},
		{"grep_codebase at a ref", func() error {
			grepAt++
			return c.call("grep_codebase", map[string]any{"pattern": "strbuf_addf", "ref": fmt.Sprintf("HEAD~%d", 100+grepAt)}, &sink)
		}, nil, func(i int) []string { return []string{"grep", "-c", "strbuf_addf", fmt.Sprintf("HEAD~%d", 100+i)} }},
	}
	fmt.Printf("%s, %d runs each: p50 of the tool (%s) and of git\n", c.dir, runs, c.via)
	fmt.Printf("%-30s %12s %12s %8s\n", "operation", "tool", "git", "ratio")
	for _, m := range ms {
		tool, err := p50(runs, m.tool)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		run := 0
		git, err := p50(runs, func() error {
			run++
			args := m.git
			if m.gitAt != nil {
				args = m.gitAt(run)
			}
			return exec.Command("git", append([]string{"-C", c.dir}, args...)...).Run()
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
