package history

import (
	"context"
	"fmt"
	"time"

	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

type listCommitsInput struct {
	Ref    string     `json:"ref"`
	Path   string     `json:"path"`
	Follow bool       `json:"follow"`
	Author string     `json:"author"`
	Query  string     `json:"query"`
	Since  string     `json:"since"`
	Until  string     `json:"until"`
	Limit  schema.Int `json:"limit"`
	Cursor string     `json:"cursor"`
	Repo   string     `json:"repo"`
}

type listCommitsOutput struct {
	Ref        string       `json:"ref"` // the commit listed from
	Commits    []commitJSON `json:"commits"`
	NextCursor *string      `json:"next_cursor"`
	Message    string       `json:"message,omitempty"`
}

// listCommits serves list_commits: newest first from ref, a page at a
// time (the cursor carries the commit the first page started from and
// how many came before).
func (s *service) listCommits(ctx context.Context, call toolkit.Call, in listCommitsInput) (toolkit.Result, error) {
	o, err := s.open(ctx, call, in.Repo, "ref", in.Ref)
	if err != nil {
		return toolkit.Result{}, err
	}
	q := githistory.LogQuery{Path: in.Path, Follow: in.Follow, Author: in.Author, Grep: in.Query, Max: int(in.Limit) + 1}
	if q.Since, q.Until, err = dates(in.Since, in.Until); err != nil {
		return toolkit.Result{}, err
	}
	if in.Path != "" {
		if err := o.checkPath(in.Path); err != nil {
			return toolkit.Result{}, err
		}
	}
	pages := s.cursors.Scope(ListCommitsTool, call.Tenant, o.ref.Name, in)
	if err := pages.Decode(in.Cursor, &q.From, &q.Skip); err != nil {
		return toolkit.Result{}, err
	}
	if q.From == "" {
		if q.From, err = o.revOrHead(ctx, "ref", in.Ref); err != nil {
			return toolkit.Result{}, err
		}
	}
	commits, err := o.git.Log(ctx, q)
	if err != nil {
		return toolkit.Result{}, fmt.Errorf("list commits: %w", err)
	}
	out := listCommitsOutput{Ref: q.From, Commits: []commitJSON{}}
	for i, c := range commits {
		if i == int(in.Limit) {
			next := pages.Encode(q.From, q.Skip+i)
			out.NextCursor = &next
			break
		}
		out.Commits = append(out.Commits, o.commitOf(c, maxListedFiles, false))
	}
	if len(out.Commits) == 0 {
		out.Message = "No commits match"
	}
	return toolkit.Result{Data: out, Message: fmt.Sprintf("%d commits", len(out.Commits))}, nil
}

// dates reads since and until: RFC 3339 times or dates (YYYY-MM-DD, the
// start of that day in UTC).
func dates(since, until string) (time.Time, time.Time, error) {
	var out [2]time.Time
	for i, v := range []string{since, until} {
		if v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			t, err = time.Parse(time.DateOnly, v)
		}
		if err != nil {
			return time.Time{}, time.Time{}, toolerr.Field([]string{"since", "until"}[i], "must be a date (2024-03-01) or an RFC 3339 time (2024-03-01T10:00:00Z)")
		}
		out[i] = t
	}
	return out[0], out[1], nil
}

type getCommitInput struct {
	Commit   string     `json:"commit"`
	Path     string     `json:"path"`
	StatOnly bool       `json:"statOnly"`
	Limit    schema.Int `json:"limit"`
	Cursor   string     `json:"cursor"`
	Repo     string     `json:"repo"`
}

type getCommitOutput struct {
	Commit commitJSON `json:"commit"`
	diffJSON
	Message string `json:"message,omitempty"`
}

// getCommit serves get_commit: the commit's message and its diff against
// its first parent (a root commit's against nothing), a page of files at
// a time.
func (s *service) getCommit(ctx context.Context, call toolkit.Call, in getCommitInput) (toolkit.Result, error) {
	o, q, pages, err := s.diffPage(ctx, call, GetCommitTool, in, diffArgs{in.Repo, in.Path, in.Cursor, in.StatOnly, in.Limit}, "commit", in.Commit)
	if err != nil {
		return toolkit.Result{}, err
	}
	if q.To == "" {
		if q.To, err = o.git.Resolve(ctx, "commit", in.Commit); err != nil {
			return toolkit.Result{}, err
		}
	}
	commits, err := o.git.Log(ctx, githistory.LogQuery{From: q.To, NoWalk: true, Max: 1})
	if err != nil || len(commits) != 1 {
		return toolkit.Result{}, fmt.Errorf("read commit %s: %w", q.To, err)
	}
	c := commits[0]
	if q.From == "" && len(c.Parents) > 0 {
		q.From = c.Parents[0]
	}
	c.Files = nil
	out := getCommitOutput{Commit: o.commitOf(c, 0, true)}
	if out.diffJSON, err = o.diff(ctx, q, pages); err != nil {
		return toolkit.Result{}, err
	}
	out.Message = pageMessage(out.diffJSON)
	return toolkit.Result{Data: out, Message: fmt.Sprintf("Commit %s: %s", c.Hash[:12], c.Subject())}, nil
}

// pageMessage says what a diff's page leaves out, or "".
func pageMessage(d diffJSON) string {
	if d.NextCursor == nil {
		return ""
	}
	return fmt.Sprintf("Showing %d of %d files; pass next_cursor as cursor for the next ones", len(d.Files), d.TotalFiles)
}
