package history

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolkit"
)

type listRefsInput struct {
	Kind   string     `json:"kind"`
	Query  string     `json:"query"`
	Limit  schema.Int `json:"limit"`
	Cursor string     `json:"cursor"`
	Repo   string     `json:"repo"`
}

type refJSON struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	Commit string `json:"commit"`
	Date   string `json:"date,omitempty"`
}

type headJSON struct {
	Commit string `json:"commit"`
	Branch string `json:"branch,omitempty"` // "" when detached
}

type listRefsOutput struct {
	Head       headJSON  `json:"head"`
	Refs       []refJSON `json:"refs"`
	Total      int       `json:"total"`
	NextCursor *string   `json:"next_cursor"`
}

// listRefs serves list_refs: branches, then tags, each by name, a page at
// a time (the cursor carries the last one shown).
func (s *service) listRefs(ctx context.Context, call toolkit.Call, in listRefsInput) (toolkit.Result, error) {
	o, err := s.open(ctx, call, in.Repo)
	if err != nil {
		return toolkit.Result{}, err
	}
	pages := s.cursors.Scope(ListRefsTool, call.Tenant, o.ref.Name, in)
	var after string
	if err := pages.Decode(in.Cursor, &after); err != nil {
		return toolkit.Result{}, err
	}
	refs, err := o.git.Refs(ctx)
	if err != nil {
		return toolkit.Result{}, fmt.Errorf("list refs: %w", err)
	}
	var out listRefsOutput
	out.Head.Commit, out.Head.Branch, _ = o.git.Head(ctx)
	out.Refs = []refJSON{}
	query := strings.ToLower(in.Query)
	for _, r := range refs {
		if (in.Kind != "" && r.Kind != in.Kind) || !strings.Contains(strings.ToLower(r.Name), query) {
			continue
		}
		out.Total++
		key := r.Kind + "\x00" + r.Name
		if after != "" && key <= after || len(out.Refs) > int(in.Limit) {
			continue
		}
		j := refJSON{Name: r.Name, Kind: r.Kind, Commit: r.Commit}
		if !r.Date.IsZero() {
			j.Date = r.Date.UTC().Format("2006-01-02T15:04:05Z")
		}
		out.Refs = append(out.Refs, j)
	}
	if len(out.Refs) > int(in.Limit) {
		out.Refs = out.Refs[:in.Limit]
		last := out.Refs[len(out.Refs)-1]
		next := pages.Encode(last.Kind + "\x00" + last.Name)
		out.NextCursor = &next
	}
	return toolkit.Result{Data: out, Message: fmt.Sprintf("%d refs", out.Total)}, nil
}
