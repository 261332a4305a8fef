package history

import (
	"time"

	"github.com/toolshed/toolshed/shared/githistory"
)

// personJSON is an author or a committer.
type personJSON struct {
	Name  string    `json:"name"`
	Email string    `json:"email"`
	Date  time.Time `json:"date"`
}

type commitJSON struct {
	Hash      string     `json:"hash"`
	Parents   []string   `json:"parents"`
	Author    personJSON `json:"author"`
	Committer personJSON `json:"committer"`
	Subject   string     `json:"subject"`
	Message   string     `json:"message,omitempty"`
	Files     []fileJSON `json:"files,omitempty"`
	MoreFiles int        `json:"moreFiles,omitempty"` // files changed beyond those listed
	Withheld  int        `json:"withheld,omitempty"`  // files the repository's policy hides
}

// fileJSON is a file a commit or a diff changed.
type fileJSON struct {
	Path      string     `json:"path"`
	OldPath   string     `json:"oldPath,omitempty"`
	Status    string     `json:"status,omitempty"`
	Additions int        `json:"additions"`
	Deletions int        `json:"deletions"`
	Binary    bool       `json:"binary,omitempty"`
	Hunks     []hunkJSON `json:"hunks,omitempty"`
	// Note says why hunks are missing or cut: "binary", "withheld: …",
	// "cut: …".
	Note string `json:"note,omitempty"`
}

type hunkJSON struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Header   string   `json:"header,omitempty"`
	Lines    []string `json:"lines"`
}

type statJSON struct {
	Files     int `json:"files"`
	Additions int `json:"additions"`
	Deletions int `json:"deletions"`
}

// statuses are git's status letters in words.
var statuses = map[string]string{"A": "added", "M": "modified", "D": "deleted", "R": "renamed", "C": "copied", "T": "type changed"}

// maxListedFiles is how many of a commit's files list_commits and
// search_commits show.
const maxListedFiles = 50

// commitOf is c for an answer; its files are those o may show, at most
// maxFiles of them (0: none, and no count), counting the others.
func (o opened) commitOf(c githistory.Commit, maxFiles int, message bool) commitJSON {
	out := commitJSON{
		Hash: c.Hash, Parents: c.Parents, Subject: c.Subject(),
		Author:    personJSON{c.Author, c.AuthorEmail, c.AuthorDate.UTC()},
		Committer: personJSON{c.Committer, c.CommitterEmail, c.CommitDate.UTC()},
	}
	if out.Parents == nil {
		out.Parents = []string{}
	}
	if message {
		out.Message = c.Message
	}
	if maxFiles == 0 {
		return out
	}
	for _, f := range c.Files {
		switch {
		case !o.visible(f.Path, f.OldPath):
			out.Withheld++
		case len(out.Files) < maxFiles:
			out.Files = append(out.Files, statOf(f))
		default:
			out.MoreFiles++
		}
	}
	return out
}

func statOf(f githistory.FileStat) fileJSON {
	return fileJSON{Path: f.Path, OldPath: f.OldPath, Additions: f.Added, Deletions: f.Deleted, Binary: f.Binary}
}

func hunksOf(hs []githistory.Hunk) []hunkJSON {
	out := make([]hunkJSON, len(hs))
	for i, h := range hs {
		out[i] = hunkJSON{h.OldStart, h.OldLines, h.NewStart, h.NewLines, h.Header, h.Lines}
	}
	return out
}
