package githistory

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ZeroID is the commit id git gives lines not committed yet.
const ZeroID = "0000000000000000000000000000000000000000"

// BlameHunk is a run of lines that one commit last changed.
type BlameHunk struct {
	Line        int // first line, 1-based, in the blamed file
	Lines       int
	OrigLine    int    // the same first line in the commit that changed it
	OrigPath    string // the file's path in that commit
	Commit      string // ZeroID for lines not committed yet
	Author      string
	AuthorEmail string
	AuthorTime  time.Time
	Summary     string
	// Boundary is set when the commit is where the repository's history
	// stops (a shallow commit: a push bounded the history uploaded): the
	// lines may be older than it says.
	Boundary bool
}

// Uncommitted reports whether the hunk's lines are not committed yet.
func (h BlameHunk) Uncommitted() bool { return h.Commit == ZeroID }

// Blame is the attribution of a file's lines, by hunk in line order.
// Complete is false when the time ran out first: the lines of no hunk
// are the ones git had not attributed yet.
type Blame struct {
	Hunks    []BlameHunk
	Complete bool
}

// BlameQuery says what to blame: Path at Rev (a full commit id), or the
// working tree's file, uncommitted lines too, when Rev is ""; lines Start
// to End (0: from the first, to the last).
type BlameQuery struct {
	Rev        string
	Path       string
	Start, End int
}

// Blame attributes the lines q names. git reports hunks as it attributes
// them (--incremental); when ctx ends first, Blame returns those it has,
// not Complete, instead of failing.
func (r *Repo) Blame(ctx context.Context, q BlameQuery) (Blame, error) {
	args := []string{"blame", "--incremental", "-M", "--no-textconv"}
	if q.Start > 0 {
		end := ""
		if q.End > 0 {
			end = strconv.Itoa(q.End)
		}
		args = append(args, "-L", strconv.Itoa(q.Start)+","+end)
	}
	if q.Rev != "" {
		// blame takes no --end-of-options; q.Rev is a commit id, which
		// cannot be read as an option.
		if !isID(q.Rev) {
			return Blame{}, fmt.Errorf("blame: %q is not a commit id", q.Rev)
		}
		args = append(args, q.Rev)
	}
	cmd := r.command(ctx, append(args, "--", q.Path)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Blame{}, err
	}
	if err := cmd.Start(); err != nil {
		if ctx.Err() != nil {
			return Blame{}, nil
		}
		return Blame{}, err
	}
	hunks, readErr := readIncremental(stdout)
	waitErr := cmd.Wait()
	if ctx.Err() != nil {
		return Blame{Hunks: sortHunks(hunks)}, nil
	}
	if readErr != nil {
		return Blame{}, readErr
	}
	if waitErr != nil {
		return Blame{}, fmt.Errorf("git blame: %w: %s", waitErr, strings.TrimSpace(stderr.String()))
	}
	return Blame{Hunks: sortHunks(hunks), Complete: true}, r.markBoundary(ctx, hunks)
}

// markBoundary marks the hunks whose commit is a shallow one. git blame
// calls it a "boundary", but also every root commit, whose lines are
// really that old; so the repository's shallow list says which are cut.
func (r *Repo) markBoundary(ctx context.Context, hunks []BlameHunk) error {
	if !slices.ContainsFunc(hunks, func(h BlameHunk) bool { return h.Boundary }) {
		return nil
	}
	path, err := r.output(ctx, "rev-parse", "--git-path", "shallow")
	if err != nil {
		return err
	}
	p := strings.TrimSpace(string(path))
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.dir, p)
	}
	data, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	shallow := strings.Fields(string(data))
	for i := range hunks {
		hunks[i].Boundary = hunks[i].Boundary && slices.Contains(shallow, hunks[i].Commit)
	}
	return nil
}

// isID reports whether s is a full commit id (hex).
func isID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return !strings.ContainsFunc(s, func(c rune) bool { return (c < '0' || c > '9') && (c < 'a' || c > 'f') })
}

func sortHunks(h []BlameHunk) []BlameHunk {
	slices.SortFunc(h, func(a, b BlameHunk) int { return a.Line - b.Line })
	return h
}

// readIncremental reads git blame --incremental: each entry is "<id>
// <orig line> <line> <lines>", the commit's details the first time it
// appears ("author …", "summary …"), and "filename <path>" last.
func readIncremental(r io.Reader) ([]BlameHunk, error) {
	seen := map[string]BlameHunk{}
	var hunks []BlameHunk
	var cur *BlameHunk
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if cur == nil {
			h, err := entryHeader(line)
			if err != nil {
				return hunks, err
			}
			cur = &h
			continue
		}
		key, value, _ := strings.Cut(line, " ")
		if key == "filename" {
			cur.OrigPath = value
			info := seen[cur.Commit]
			if info.Commit == "" {
				info = *cur
				seen[cur.Commit] = info
			}
			cur.Author, cur.AuthorEmail, cur.AuthorTime, cur.Summary = info.Author, info.AuthorEmail, info.AuthorTime, info.Summary
			cur.Boundary = cur.Boundary || info.Boundary
			hunks = append(hunks, *cur)
			cur = nil
			continue
		}
		detail(cur, key, value)
	}
	return hunks, sc.Err()
}

func entryHeader(line string) (BlameHunk, error) {
	f := strings.Fields(line)
	if len(f) != 4 || len(f[0]) < 40 {
		return BlameHunk{}, fmt.Errorf("git blame: unexpected line %q", line)
	}
	orig, err1 := strconv.Atoi(f[1])
	at, err2 := strconv.Atoi(f[2])
	n, err3 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || err3 != nil {
		return BlameHunk{}, fmt.Errorf("git blame: unexpected line %q", line)
	}
	return BlameHunk{Commit: f[0], OrigLine: orig, Line: at, Lines: n}, nil
}

// detail records one of a commit's details.
func detail(h *BlameHunk, key, value string) {
	switch key {
	case "author":
		h.Author = value
	case "author-mail":
		h.AuthorEmail = strings.TrimSuffix(strings.TrimPrefix(value, "<"), ">")
	case "author-time":
		if s, err := strconv.ParseInt(value, 10, 64); err == nil {
			h.AuthorTime = time.Unix(s, 0).UTC()
		}
	case "summary":
		h.Summary = value
	case "boundary":
		h.Boundary = true
	}
}

// LastChange returns the commit that last changed path as seen from rev
// (a commit id), by git's history simplification (the one blame follows
// through merges), or "" when no commit did.
func (r *Repo) LastChange(ctx context.Context, rev, path string) (string, error) {
	if !isID(rev) {
		return "", fmt.Errorf("rev-list: %q is not a commit id", rev)
	}
	out, err := r.output(ctx, "rev-list", "-n", "1", "--end-of-options", rev, "--", path)
	return strings.TrimSpace(string(out)), err
}
