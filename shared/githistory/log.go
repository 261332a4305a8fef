package githistory

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Commit is one commit and, from Log, the files it changed (against its
// first parent; a root commit against nothing).
type Commit struct {
	Hash           string
	Parents        []string
	Author         string
	AuthorEmail    string
	AuthorDate     time.Time
	Committer      string
	CommitterEmail string
	CommitDate     time.Time
	Message        string // the whole message, as written
	Files          []FileStat
}

// Subject is the message's first paragraph on one line, as git shows it.
func (c Commit) Subject() string {
	para, _, _ := strings.Cut(strings.TrimLeft(c.Message, "\n"), "\n\n")
	return strings.Join(strings.Fields(para), " ")
}

// FileStat is a file a commit or a diff changed, with its line counts.
type FileStat struct {
	Path    string
	OldPath string // the path before a rename or copy; "" otherwise
	Added   int
	Deleted int
	Binary  bool // git counts no lines of a binary file
}

// LogQuery selects commits, newest first, from From (a commit id).
type LogQuery struct {
	From   string
	Path   string // only commits touching this path ("" any)
	Follow bool   // follow Path through renames
	Author string // author name or email contains this (any case)
	Grep   string // message contains this (any case)
	Since  time.Time
	Until  time.Time
	Skip   int
	Max    int
	NoWalk bool // only From itself
}

// logFormat is one commit's fields, each ended by NUL, after a record
// separator: hash, parents, author, email, date, committer, email, date,
// message.
const logFormat = "%x1e%H%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B%x00"

const logFields = 9

// Log returns the commits q selects, each with its files changed.
func (r *Repo) Log(ctx context.Context, q LogQuery) ([]Commit, error) {
	out, err := r.output(ctx, logArgs(q, "--format="+logFormat, "-z", "--numstat")...)
	if err != nil {
		return nil, err
	}
	return parseLog(out)
}

// logArgs are git log's arguments for q, with the options of its output
// (format, stat or patch); every user value is inside one "--name=value"
// argument or after "--".
func logArgs(q LogQuery, output ...string) []string {
	args := append([]string{"log"}, output...)
	args = append(args, "-M", "--diff-merges=first-parent", "--no-ext-diff", "--no-textconv", "--no-color",
		"--regexp-ignore-case", "--fixed-strings")
	if q.NoWalk {
		args = append(args, "--no-walk")
	}
	if q.Follow && q.Path != "" {
		args = append(args, "--follow")
	}
	if q.Author != "" {
		args = append(args, "--author="+q.Author)
	}
	if q.Grep != "" {
		args = append(args, "--grep="+q.Grep)
	}
	if !q.Since.IsZero() {
		args = append(args, "--since="+q.Since.Format(time.RFC3339))
	}
	if !q.Until.IsZero() {
		args = append(args, "--until="+q.Until.Format(time.RFC3339))
	}
	if q.Skip > 0 {
		args = append(args, "--skip="+strconv.Itoa(q.Skip))
	}
	if q.Max > 0 {
		args = append(args, "--max-count="+strconv.Itoa(q.Max))
	}
	args = append(args, "--end-of-options", q.From, "--")
	if q.Path != "" {
		args = append(args, q.Path)
	}
	return args
}

// parseLog reads logFormat records, each followed by its --numstat -z
// entries.
func parseLog(out []byte) ([]Commit, error) {
	var commits []Commit
	for len(out) > 0 {
		if out[0] != 0x1e {
			return nil, fmt.Errorf("git log: unexpected output %q", head(out))
		}
		out = out[1:]
		var fields [logFields]string
		for i := range fields {
			f, rest, ok := bytes.Cut(out, []byte{0})
			if !ok {
				return nil, fmt.Errorf("git log: a commit of %d fields", i)
			}
			fields[i], out = string(f), rest
		}
		c, err := commitOf(fields)
		if err != nil {
			return nil, err
		}
		c.Files, out, err = parseNumstat(bytes.TrimLeft(out, "\x00\n"), 0x1e)
		if err != nil {
			return nil, err
		}
		commits = append(commits, c)
	}
	return commits, nil
}

func commitOf(f [logFields]string) (Commit, error) {
	ad, err1 := time.Parse(time.RFC3339, f[4])
	cd, err2 := time.Parse(time.RFC3339, f[7])
	if err1 != nil || err2 != nil {
		return Commit{}, fmt.Errorf("git log: commit %s: dates %q %q", f[0], f[4], f[7])
	}
	return Commit{Hash: f[0], Parents: strings.Fields(f[1]), Author: f[2], AuthorEmail: f[3], AuthorDate: ad,
		Committer: f[5], CommitterEmail: f[6], CommitDate: cd, Message: f[8]}, nil
}

// parseNumstat reads --numstat -z entries ("added\tdeleted\tpath\0", or
// "added\tdeleted\t\0old\0new\0" for a rename; "-" counts for a binary
// file) until stop begins the rest, or the end.
func parseNumstat(out []byte, stop byte) ([]FileStat, []byte, error) {
	var files []FileStat
	for len(out) > 0 && out[0] != stop {
		added, rest, ok1 := bytes.Cut(out, []byte{'\t'})
		deleted, rest, ok2 := bytes.Cut(rest, []byte{'\t'})
		if !ok1 || !ok2 {
			return nil, nil, fmt.Errorf("git numstat: unexpected output %q", head(out))
		}
		f := FileStat{Binary: string(added) == "-"}
		if !f.Binary {
			f.Added, _ = strconv.Atoi(string(added))
			f.Deleted, _ = strconv.Atoi(string(deleted))
		}
		var names []string
		if len(rest) > 0 && rest[0] == 0 {
			names, out = cutNames(rest[1:], 2)
			if len(names) == 2 {
				f.OldPath = names[0]
				names = names[1:]
			}
		} else {
			names, out = cutNames(rest, 1)
		}
		if len(names) != 1 {
			return nil, nil, fmt.Errorf("git numstat: a truncated entry")
		}
		f.Path = names[0]
		files = append(files, f)
		out = bytes.TrimLeft(out, "\n")
	}
	return files, out, nil
}

// cutNames cuts n NUL-ended names off out.
func cutNames(out []byte, n int) ([]string, []byte) {
	var names []string
	for range n {
		name, rest, ok := bytes.Cut(out, []byte{0})
		if !ok {
			return names, nil
		}
		names, out = append(names, string(name)), rest
	}
	return names, out
}

// head is the start of out, for errors.
func head(out []byte) []byte { return out[:min(len(out), 60)] }
