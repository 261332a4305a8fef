package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

type blameInput struct {
	Path      string     `json:"path"`
	Ref       string     `json:"ref"`
	StartLine schema.Int `json:"startLine"`
	EndLine   schema.Int `json:"endLine"`
	Repo      string     `json:"repo"`
}

type blameHunkJSON struct {
	StartLine   int        `json:"startLine"`
	Lines       int        `json:"lines"`
	Commit      *string    `json:"commit"` // null: not committed yet
	Uncommitted bool       `json:"uncommitted,omitempty"`
	Author      string     `json:"author,omitempty"`
	AuthorEmail string     `json:"authorEmail,omitempty"`
	Date        *time.Time `json:"date,omitempty"`
	Summary     string     `json:"summary,omitempty"`
	OrigPath    string     `json:"origPath,omitempty"` // the file's path in that commit, when another
	OrigLine    int        `json:"origLine,omitempty"`
	Boundary    bool       `json:"boundary,omitempty"` // the history stops at this commit: the lines may be older
}

type blameOutput struct {
	Path         string          `json:"path"`
	Ref          string          `json:"ref"` // the commit blamed, "" for the working tree
	Lines        int             `json:"lines"`
	Hunks        []blameHunkJSON `json:"hunks"`
	Complete     bool            `json:"complete"`
	Unattributed [][2]int        `json:"unattributed,omitempty"` // first and last lines not attributed in time
	Message      string          `json:"message,omitempty"`
}

// blame serves blame: the working tree's file (uncommitted lines
// included) without ref, the file at ref with one; a complete blame of a
// file at a commit is cached by (path, the commit that last changed it,
// lines): see blameKey.
func (s *service) blame(ctx context.Context, call toolkit.Call, in blameInput) (toolkit.Result, error) {
	o, err := s.open(ctx, call, in.Repo, "ref", in.Ref)
	if err != nil {
		return toolkit.Result{}, err
	}
	if err := o.checkPath(in.Path); err != nil {
		return toolkit.Result{}, err
	}
	q := githistory.BlameQuery{Path: in.Path, Start: int(in.StartLine), End: int(in.EndLine)}
	content, err := o.blamed(ctx, in, &q)
	if err != nil {
		return toolkit.Result{}, err
	}
	n := bytes.Count(content, []byte("\n"))
	if len(content) > 0 && content[len(content)-1] != '\n' {
		n++
	}
	if q.Start > n {
		return toolkit.Result{}, toolerr.Field("startLine", "the file has %d lines", n).With("lines", n)
	}
	var key *blameKey // a blame at a commit is kept; the working tree's is not
	if q.Rev != "" {
		changed, err := o.git.LastChange(ctx, q.Rev, in.Path)
		if err != nil {
			return toolkit.Result{}, fmt.Errorf("blame %s: %w", in.Path, err)
		}
		key = &blameKey{Path: in.Path, Changed: changed, Start: q.Start, End: q.End}
	}
	var b githistory.Blame
	ok := false
	if key != nil {
		b, ok = s.blames.get(ctx, o.ref, *key, n)
	}
	if !ok {
		gctx, cancel := toolkit.Gathering(ctx)
		b, err = o.git.Blame(gctx, q)
		cancel()
		if err != nil && q.Rev == "" {
			b, err = o.notCommitted(ctx, q, n, err)
		}
		if err != nil {
			return toolkit.Result{}, fmt.Errorf("blame %s: %w", in.Path, err)
		}
		if b.Complete && key != nil {
			s.blames.put(ctx, o.ref, *key, b)
		}
	}
	out := o.blameOutput(in.Path, q, n, b)
	msg := fmt.Sprintf("%d hunks", len(out.Hunks))
	if !out.Complete {
		out.Message = "The blame stopped at its time limit: the lines in unattributed are not attributed; ask for a smaller range (startLine, endLine)"
		msg = out.Message
	} else if slices.ContainsFunc(out.Hunks, func(h blameHunkJSON) bool { return h.Boundary }) {
		out.Message = "The hunks marked boundary come from the oldest commit of the history pushed: their lines may go back further than the pushed history"
		msg = out.Message
	}
	return toolkit.Result{Data: out, Message: msg}, nil
}

// blamed is the content blame attributes, checked as the view checks a
// read; it sets q.Rev to the commit ref names.
func (o opened) blamed(ctx context.Context, in blameInput, q *githistory.BlameQuery) ([]byte, error) {
	if in.Ref == "" && !o.git.Bare() {
		data, err := fs.ReadFile(o.view, in.Path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, toolerr.New(toolerr.ResourceNotFound, "No file %s in the working tree", in.Path).With("path", in.Path)
		}
		return data, err
	}
	rev, err := o.revOrHead(ctx, "ref", in.Ref)
	if err != nil {
		return nil, err
	}
	q.Rev = rev
	data, found, err := o.git.ReadFile(ctx, rev, in.Path)
	switch {
	case err != nil:
		return nil, err
	case !found:
		return nil, toolerr.New(toolerr.ResourceNotFound, "No file %s at %s", in.Path, rev).With("path", in.Path).With("ref", rev)
	}
	return data, o.checkContent(in.Path, data)
}

func (o opened) blameOutput(path string, q githistory.BlameQuery, n int, b githistory.Blame) blameOutput {
	out := blameOutput{Path: path, Ref: q.Rev, Lines: n, Hunks: make([]blameHunkJSON, len(b.Hunks)), Complete: b.Complete}
	next := max(q.Start, 1)
	for i, h := range b.Hunks {
		j := blameHunkJSON{StartLine: h.Line, Lines: h.Lines}
		if h.Uncommitted() {
			j.Uncommitted = true
		} else {
			commit, date := h.Commit, h.AuthorTime
			j.Commit, j.Date, j.Author, j.AuthorEmail, j.Summary = &commit, &date, h.Author, h.AuthorEmail, h.Summary
			j.OrigLine, j.Boundary = h.OrigLine, h.Boundary
			if h.OrigPath != path && o.checkPath(h.OrigPath) == nil {
				j.OrigPath = h.OrigPath
			}
		}
		out.Hunks[i] = j
		if h.Line > next {
			out.Unattributed = append(out.Unattributed, [2]int{next, h.Line - 1})
		}
		next = h.Line + h.Lines
	}
	last := n
	if q.End > 0 {
		last = min(q.End, n)
	}
	if next <= last {
		out.Unattributed = append(out.Unattributed, [2]int{next, last})
	}
	return out
}

// notCommitted is the blame of a working tree's file that HEAD does not
// have (new, or no commit yet): every line is uncommitted. Any other file
// keeps the failure blameErr.
func (o opened) notCommitted(ctx context.Context, q githistory.BlameQuery, n int, blameErr error) (githistory.Blame, error) {
	if _, found, err := o.git.ReadFile(ctx, "HEAD", q.Path); err != nil || found {
		return githistory.Blame{}, blameErr
	}
	first, last := max(q.Start, 1), n
	if q.End > 0 {
		last = min(q.End, n)
	}
	b := githistory.Blame{Complete: true}
	if first <= last {
		b.Hunks = []githistory.BlameHunk{{Line: first, Lines: last - first + 1, Commit: githistory.ZeroID}}
	}
	return b, nil
}
