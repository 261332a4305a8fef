package githistory

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Change is a file a diff changes: its status (git's letter: A added, M
// modified, D deleted, R renamed, C copied, T type changed), paths, line
// counts and the blob ids before and after (the zero id where there is
// none).
type Change struct {
	FileStat
	Status  string
	OldBlob string
	NewBlob string
}

// Patch is one file's diff: its hunks, or none for a binary file or a
// change of mode or name alone.
type Patch struct {
	Hunks []Hunk
}

// Hunk is a run of changed lines with their context. Lines keep git's
// first character: ' ' context, '+' added, '-' removed, '\' a note ("\ No
// newline at end of file").
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Header             string // what follows the second "@@": the enclosing function, when git finds one
	Lines              []string
}

// Bytes is the size of the hunk's lines.
func (h Hunk) Bytes() int {
	n := len(h.Header)
	for _, l := range h.Lines {
		n += len(l) + 1
	}
	return n
}

// treeArgs are diff-tree's revisions: from and to, or to alone against
// its parent (nothing for a root commit) when from is "".
func treeArgs(from, to string) []string {
	if from == "" {
		return []string{"--root", "--end-of-options", to}
	}
	return []string{"--end-of-options", from, to}
}

// diffOptions are the options of every diff: renames found, whole files,
// no program run.
var diffOptions = []string{"-r", "-M", "--no-commit-id", "--no-ext-diff", "--no-textconv", "--no-color"}

// Changes returns the files changed from from to to (commit ids; from ""
// means to's first parent, or nothing for a root commit), in git's
// order.
func (r *Repo) Changes(ctx context.Context, from, to string) ([]Change, error) {
	args := append([]string{"diff-tree", "-z", "--raw", "--numstat"}, diffOptions...)
	out, err := r.output(ctx, append(args, treeArgs(from, to)...)...)
	if err != nil {
		return nil, err
	}
	return parseRawNumstat(out)
}

// parseRawNumstat reads --raw entries (":mode mode blob blob S\0path\0",
// two paths for R and C) and then as many --numstat entries.
func parseRawNumstat(out []byte) ([]Change, error) {
	var changes []Change
	for len(out) > 0 && out[0] == ':' {
		meta, rest, ok := bytes.Cut(out[1:], []byte{0})
		parts := strings.Fields(string(meta))
		if !ok || len(parts) != 5 {
			return nil, fmt.Errorf("git diff-tree: unexpected output %q", head(out))
		}
		c := Change{Status: parts[4][:1], OldBlob: parts[2], NewBlob: parts[3]}
		n := 1
		if c.Status == "R" || c.Status == "C" {
			n = 2
		}
		names, rest := cutNames(rest, n)
		if len(names) != n {
			return nil, fmt.Errorf("git diff-tree: a truncated entry")
		}
		c.Path = names[n-1]
		if n == 2 {
			c.OldPath = names[0]
		}
		changes = append(changes, c)
		out = rest
	}
	stats, _, err := parseNumstat(out, 0)
	if err != nil {
		return nil, err
	}
	if len(stats) != len(changes) {
		return nil, fmt.Errorf("git diff-tree: %d files but %d counts", len(changes), len(stats))
	}
	for i := range changes {
		changes[i].Added, changes[i].Deleted, changes[i].Binary = stats[i].Added, stats[i].Deleted, stats[i].Binary
	}
	return changes, nil
}

// Patches returns the diffs of some of the changes Changes returned for
// the same from and to, in their order.
func (r *Repo) Patches(ctx context.Context, from, to string, changes []Change) ([]Patch, error) {
	if len(changes) == 0 {
		return nil, nil
	}
	args := append(append([]string{"diff-tree", "-p"}, diffOptions...), treeArgs(from, to)...)
	args = append(args, "--")
	for _, c := range changes {
		if c.OldPath != "" {
			args = append(args, c.OldPath)
		}
		args = append(args, c.Path)
	}
	out, err := r.output(ctx, args...)
	if err != nil {
		return nil, err
	}
	blocks := splitFiles(out)
	if len(blocks) != len(changes) {
		return nil, fmt.Errorf("git diff-tree -p: %d files, %d asked for", len(blocks), len(changes))
	}
	patches := make([]Patch, len(blocks))
	for i, b := range blocks {
		if patches[i], err = parsePatch(b); err != nil {
			return nil, fmt.Errorf("%s: %w", changes[i].Path, err)
		}
	}
	return patches, nil
}

// splitFiles cuts a patch into its files' parts, each starting with
// "diff --git ".
func splitFiles(out []byte) [][]byte {
	var blocks [][]byte
	for len(out) > 0 {
		next := bytes.Index(out[1:], []byte("\ndiff --git "))
		if next < 0 {
			blocks = append(blocks, out)
			break
		}
		blocks, out = append(blocks, out[:next+2]), out[next+2:]
	}
	return blocks
}

// parsePatch reads one file's part of a patch: its header lines, then
// its hunks.
func parsePatch(b []byte) (Patch, error) {
	var p Patch
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	i := 0
	for i < len(lines) && !strings.HasPrefix(lines[i], "@@ ") {
		i++
	}
	for i < len(lines) {
		h, err := hunkHeader(lines[i])
		if err != nil {
			return Patch{}, err
		}
		i++
		for i < len(lines) && !strings.HasPrefix(lines[i], "@@ ") {
			h.Lines = append(h.Lines, lines[i])
			i++
		}
		p.Hunks = append(p.Hunks, h)
	}
	return p, nil
}

// hunkHeader reads "@@ -a,b +c,d @@ header" (",b" and ",d" are 1 when
// left out).
func hunkHeader(line string) (Hunk, error) {
	rest, _ := strings.CutPrefix(line, "@@ ")
	ranges, header, ok := strings.Cut(rest, " @@")
	was, now, ok2 := strings.Cut(ranges, " ")
	if !ok || !ok2 || !strings.HasPrefix(was, "-") || !strings.HasPrefix(now, "+") {
		return Hunk{}, fmt.Errorf("a hunk header %q", line)
	}
	var h Hunk
	var err error
	if h.OldStart, h.OldLines, err = lineRange(was[1:]); err == nil {
		h.NewStart, h.NewLines, err = lineRange(now[1:])
	}
	h.Header = strings.TrimPrefix(header, " ")
	return h, err
}

func lineRange(s string) (int, int, error) {
	start, count, found := strings.Cut(s, ",")
	a, err := strconv.Atoi(start)
	if err != nil {
		return 0, 0, fmt.Errorf("a line range %q", s)
	}
	if !found {
		return a, 1, nil
	}
	b, err := strconv.Atoi(count)
	if err != nil {
		return 0, 0, fmt.Errorf("a line range %q", s)
	}
	return a, b, nil
}
