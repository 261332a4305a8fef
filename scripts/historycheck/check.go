package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolshed/toolshed/shared/repo"
)

type file struct {
	Path      string `json:"path"`
	OldPath   string `json:"oldPath"`
	Status    string `json:"status"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	Binary    bool   `json:"binary"`
	Note      string `json:"note"`
	Hunks     []struct {
		OldStart, OldLines, NewStart, NewLines int
		Header                                 string
		Lines                                  []string
	} `json:"hunks"`
}

type diffPage struct {
	Files      []file  `json:"files"`
	NextCursor *string `json:"next_cursor"`
}

// check samples commits along the first-parent line and checks each.
func (c *checker) check(samples int) error {
	line := strings.Fields(c.git("rev-list", "--first-parent", "HEAD"))
	if len(line) < 200 {
		return fmt.Errorf("%s has %d commits on its first-parent line; the check wants a long history", c.dir, len(line))
	}
	policy, err := repo.NewPolicy(nil, "")
	if err != nil {
		return err
	}
	checks := 0
	for i := range samples {
		h := line[(len(line)-101)*i/samples]
		files := c.checkCommit(h, policy)
		checks++
		if f, ok := pickFile(files); ok {
			c.checkLog(h, f.Path)
			c.checkBlame(h, f.Path)
			c.checkRead(h, f.Path)
			checks += 3
		}
		c.checkCompare(h+"~100", h, policy)
		checks++
	}
	for _, pattern := range []string{"strbuf_addf", "die_errno", "O_NOFOLLOW"} {
		c.checkSearch(pattern)
		checks++
	}
	fmt.Printf("%s: %d commits on HEAD's first-parent line, %d sampled, %d checks (list_commits, get_commit, compare, blame, read_file, search_commits), %d differences\n",
		c.dir, len(line), samples, checks, c.diffs)
	if c.diffs > 0 {
		return fmt.Errorf("%d differences", c.diffs)
	}
	return nil
}

// pickFile is a modified text file of files, whole in the answer.
func pickFile(files []file) (file, bool) {
	for _, f := range files {
		if f.Status == "modified" && !f.Binary && f.Note == "" && len(f.Hunks) > 0 {
			return f, true
		}
	}
	return file{}, false
}

// diffPages collects every page of a get_commit or compare answer.
func (c *checker) diffPages(tool string, args map[string]any) ([]file, error) {
	var all []file
	for {
		var page diffPage
		if err := c.call(tool, args, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Files...)
		if page.NextCursor == nil {
			return all, nil
		}
		args["cursor"] = *page.NextCursor
	}
}

// checkCommit compares get_commit with git show --first-parent: the files,
// their counts, and the hunks of each file shown whole.
func (c *checker) checkCommit(h string, policy *repo.Policy) []file {
	files, err := c.diffPages("get_commit", map[string]any{"commit": h, "limit": 300})
	if err != nil {
		c.differ("get_commit %s: %v", h, err)
		return nil
	}
	want := numstat(c.git("show", "--first-parent", "-M", "--format=", "--numstat", "-z", h), policy)
	if got := stats(files); !slices.Equal(got, want) {
		c.differ("get_commit %s files:\n got %q\nwant %q", h, got, want)
	}
	for _, f := range files {
		if f.Binary || f.Note != "" {
			continue
		}
		paths := []string{f.Path}
		if f.OldPath != "" {
			paths = []string{f.OldPath, f.Path}
		}
		patch := c.git(append([]string{"show", "--first-parent", "-M", "--format=", h, "--"}, paths...)...)
		if got, want := hunkText(f), hunksOf(patch); got != want {
			c.differ("get_commit %s %s hunks differ from git show", h, f.Path)
		}
	}
	return files
}

// stats are files as "path\told\tadded\tdeleted" (binary: "-").
func stats(files []file) []string {
	out := make([]string, len(files))
	for i, f := range files {
		a, d := fmt.Sprint(f.Additions), fmt.Sprint(f.Deletions)
		if f.Binary {
			a, d = "-", "-"
		}
		out[i] = strings.Join([]string{f.Path, f.OldPath, a, d}, "\t")
	}
	return out
}

// numstat reads git's --numstat -z as stats does, leaving out what the
// policy denies.
func numstat(out string, policy *repo.Policy) []string {
	tokens := strings.Split(strings.TrimLeft(out, "\n"), "\x00")
	var files []string
	for i := 0; i < len(tokens); i++ {
		f := strings.SplitN(strings.TrimLeft(tokens[i], "\n"), "\t", 3)
		if len(f) != 3 {
			continue
		}
		path, old := f[2], ""
		if path == "" && i+2 < len(tokens) {
			old, path = tokens[i+1], tokens[i+2]
			i += 2
		}
		if policy.Check(path) != nil || (old != "" && policy.Check(old) != nil) {
			continue
		}
		files = append(files, strings.Join([]string{path, old, f[0], f[1]}, "\t"))
	}
	return files
}

// hunkText writes a file's hunks as git does.
func hunkText(f file) string {
	var b strings.Builder
	for _, h := range f.Hunks {
		fmt.Fprintf(&b, "@@ -%s +%s @@", span(h.OldStart, h.OldLines), span(h.NewStart, h.NewLines))
		if h.Header != "" {
			b.WriteString(" " + h.Header)
		}
		b.WriteString("\n")
		for _, l := range h.Lines {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func span(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// hunksOf is a one-file patch from its first hunk on.
func hunksOf(patch string) string {
	if i := strings.Index(patch, "\n@@ "); i >= 0 {
		return patch[i+1:]
	}
	return ""
}
