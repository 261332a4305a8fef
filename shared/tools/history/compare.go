package history

import (
	"context"
	"fmt"
	"strconv"
	"strings"

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
	o, err := s.open(ctx, call, in.Repo, "base", in.Base, "head", in.Head)
	if err != nil {
		return toolkit.Result{}, err
	}
	if in.Path != "" {
		if err := o.checkPath(in.Path); err != nil {
			return toolkit.Result{}, err
		}
	}
	q := diffQuery{Path: in.Path, StatOnly: in.StatOnly, Limit: int(in.Limit)}
	pages := s.cursors.Scope(CompareTool, call.Tenant, o.ref.Name, in)
	if err := pages.Decode(in.Cursor, &q.From, &q.To, &q.Start); err != nil {
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
