package history

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolkit"
)

type compareInput struct {
	Base     string     `json:"base"`
	Head     string     `json:"head"`
	Path     string     `json:"path"`
	StatOnly bool       `json:"statOnly"`
	Limit    schema.Int `json:"limit"`
	Cursor   string     `json:"cursor"`
	Repo     string     `json:"repo"`
}

type compareOutput struct {
	Base      string `json:"base"` // commit ids
	Head      string `json:"head"`
	MergeBase string `json:"mergeBase,omitempty"`
	Ahead     int    `json:"ahead"`  // commits in head that base lacks
	Behind    int    `json:"behind"` // commits in base that head lacks
	diffJSON
	Message string `json:"message,omitempty"`
}

// compare serves compare: the diff from base to head (as git diff base
// head shows it), stat first, then a page of files.
func (s *service) compare(ctx context.Context, call toolkit.Call, in compareInput) (toolkit.Result, error) {
	o, q, pages, err := s.diffPage(ctx, call, CompareTool, in, diffArgs{in.Repo, in.Path, in.Cursor, in.StatOnly, in.Limit}, "base", in.Base, "head", in.Head)
	if err != nil {
		return toolkit.Result{}, err
	}
	if q.From == "" {
		if q.From, err = o.git.Resolve(ctx, "base", in.Base); err != nil {
			return toolkit.Result{}, err
		}
		if q.To, err = o.git.Resolve(ctx, "head", in.Head); err != nil {
			return toolkit.Result{}, err
		}
	}
	out := compareOutput{Base: q.From, Head: q.To}
	if out.MergeBase, out.Behind, out.Ahead, err = o.counts(ctx, q.From, q.To); err != nil {
		return toolkit.Result{}, err
	}
	if out.diffJSON, err = o.diff(ctx, q, pages); err != nil {
		return toolkit.Result{}, err
	}
	out.Message = pageMessage(out.diffJSON)
	return toolkit.Result{Data: out, Message: fmt.Sprintf("%d files changed, %d commits ahead, %d behind", out.Stat.Files, out.Ahead, out.Behind)}, nil
}

// counts returns the merge base of base and head ("" when they share no
// history) and the commits each has that the other lacks.
func (o opened) counts(ctx context.Context, base, head string) (string, int, int, error) {
	mb, _ := o.git.MergeBase(ctx, base, head)
	out, err := o.git.Count(ctx, base, head)
	if err != nil {
		return "", 0, 0, err
	}
	f := strings.Fields(out)
	if len(f) != 2 {
		return "", 0, 0, fmt.Errorf("git rev-list --count: %q", out)
	}
	behind, _ := strconv.Atoi(f[0])
	ahead, _ := strconv.Atoi(f[1])
	return mb, behind, ahead, nil
}

// diffArgs are the arguments get_commit and compare share.
type diffArgs struct {
	Repo, Path, Cursor string
	StatOnly           bool
	Limit              schema.Int
}

// diffPage opens the repository a diff tool's call reads (revs as open
// takes them), checks the path the diff is limited to, and reads the
// call's cursor into the query of its page; in is the call's input, which
// the cursor is tied to.
func (s *service) diffPage(ctx context.Context, call toolkit.Call, tool string, in any, d diffArgs, revs ...string) (opened, diffQuery, cursor.Scope, error) {
	o, err := s.open(ctx, call, d.Repo, revs...)
	if err != nil {
		return opened{}, diffQuery{}, cursor.Scope{}, err
	}
	if d.Path != "" {
		if err := o.checkPath(d.Path); err != nil {
			return opened{}, diffQuery{}, cursor.Scope{}, err
		}
	}
	q := diffQuery{Path: d.Path, StatOnly: d.StatOnly, Limit: int(d.Limit)}
	pages := s.cursors.Scope(tool, call.Tenant, o.ref.Name, in)
	if err := pages.Decode(d.Cursor, &q.From, &q.To, &q.Start); err != nil {
		return opened{}, diffQuery{}, cursor.Scope{}, err
	}
	return o, q, pages, nil
}
