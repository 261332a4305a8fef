package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolshed/toolshed/shared/repo"
)

// checkLog compares list_commits of a path with git log.
func (c *checker) checkLog(h, path string) {
	var out struct {
		Commits []struct {
			Hash string `json:"hash"`
		} `json:"commits"`
	}
	if err := c.call("list_commits", map[string]any{"ref": h, "path": path, "limit": 30}, &out); err != nil {
		c.differ("list_commits %s %s: %v", h, path, err)
		return
	}
	var got []string
	for _, cm := range out.Commits {
		got = append(got, cm.Hash)
	}
	want := strings.Fields(c.git("log", "--format=%H", "--no-patch", "-M", "--diff-merges=first-parent", "-n", "30", h, "--", path))
	if !slices.Equal(got, want) {
		c.differ("list_commits %s %s:\n got %v\nwant %v", h, path, got, want)
	}
}

// checkBlame compares blame's per-line commits with git blame
// --porcelain.
func (c *checker) checkBlame(h, path string) {
	var out struct {
		Hunks []struct {
			StartLine int     `json:"startLine"`
			Lines     int     `json:"lines"`
			Commit    *string `json:"commit"`
		} `json:"hunks"`
		Complete bool `json:"complete"`
	}
	if err := c.call("blame", map[string]any{"path": path, "ref": h}, &out); err != nil {
		c.differ("blame %s %s: %v", h, path, err)
		return
	}
	if !out.Complete {
		fmt.Printf("note: blame %s %s did not complete in time; not compared\n", h, path)
		return
	}
	var got []string
	for _, hk := range out.Hunks {
		for range hk.Lines {
			got = append(got, *hk.Commit)
		}
	}
	if want := porcelainCommits(c.git("blame", "--porcelain", "-M", h, "--", path)); !slices.Equal(got, want) {
		c.differ("blame %s %s: %d lines attributed, git %d, or another commit", h, path, len(got), len(want))
	}
}

// porcelainCommits is the commit of each line of git blame --porcelain.
func porcelainCommits(out string) []string {
	var commits []string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && len(f[0]) == 40 && !strings.HasPrefix(l, "\t") && strings.Trim(f[0], "0123456789abcdef") == "" {
			commits = append(commits, f[0])
		}
	}
	return commits
}

// checkRead compares read_file at a commit with git show REV:PATH.
func (c *checker) checkRead(h, path string) {
	var out struct {
		File struct {
			Content string `json:"content"`
		} `json:"file"`
	}
	if err := c.call("read_file", map[string]any{"path": path, "ref": h}, &out); err != nil {
		c.differ("read_file %s %s: %v", h, path, err)
		return
	}
	if want := c.git("show", h+":"+path); out.File.Content != want {
		c.differ("read_file %s %s: %d bytes, git show %d", h, path, len(out.File.Content), len(want))
	}
}

// checkCompare compares compare's files and counts with git diff.
func (c *checker) checkCompare(base, head string, policy *repo.Policy) {
	files, err := c.diffPages("compare", map[string]any{"base": base, "head": head, "statOnly": true, "limit": 300})
	if err != nil {
		c.differ("compare %s %s: %v", base, head, err)
		return
	}
	want := numstat(c.git("diff", "-M", "--numstat", "-z", base, head), policy)
	if got := stats(files); !slices.Equal(got, want) {
		c.differ("compare %s %s: %d files, git diff %d, or other counts", base, head, len(got), len(want))
	}
}

// checkSearch compares search_commits of a literal pattern with git log
// -G (commits whose added or removed lines match): the commits the tool
// finds, following its cursor (each call stops near its time limit), are
// git's first ones.
func (c *checker) checkSearch(pattern string) {
	args := map[string]any{"pattern": pattern, "caseSensitive": true, "limit": 5}
	var got []string
	scanned, calls := 0, 0
	for ; len(got) < 5 && calls < 30; calls++ {
		var out struct {
			Commits []struct {
				Hash string `json:"hash"`
			} `json:"commits"`
			Scanned    int     `json:"scanned"`
			NextCursor *string `json:"next_cursor"`
		}
		if err := c.call("search_commits", args, &out); err != nil {
			c.differ("search_commits %q: %v", pattern, err)
			return
		}
		for _, cm := range out.Commits {
			got = append(got, cm.Hash)
		}
		scanned += out.Scanned
		if out.NextCursor == nil {
			break
		}
		args["cursor"] = *out.NextCursor
	}
	fmt.Printf("search_commits %q: %d commits found in %d calls, %d commits searched\n", pattern, len(got), calls, scanned)
	want := strings.Fields(c.git("log", "--format=%H", "--no-patch", "-M", "--diff-merges=first-parent", "-n", fmt.Sprint(len(got)), "-G", pattern, "HEAD"))
	if len(got) == 0 || !slices.Equal(got, want) {
		c.differ("search_commits %q:\n got %v\nwant %v", pattern, got, want)
	}
}
