package tasks

import (
	"context"
	"fmt"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

type listInput struct {
	Status store.TaskStatus `json:"status"`
	Limit  schema.Int       `json:"limit"` // the contract's default is filled in
	Cursor string           `json:"cursor"`
}

type listOutput struct {
	Tasks      []taskJSON `json:"tasks"`
	Count      int        `json:"count"`
	NextCursor *string    `json:"next_cursor"`
}

// list returns one page of tasks in ascending id order. Its cursor's
// position is the last id shown.
func (s service) list(ctx context.Context, call toolkit.Call, in listInput) (toolkit.Result, error) {
	pages := s.cursors.Scope(ListTool, call.Tenant, "", in)
	q, err := taskQuery(in, pages)
	if err != nil {
		return toolkit.Result{}, err
	}
	page, err := s.tasks.List(ctx, call.Tenant, q)
	if err != nil {
		return toolkit.Result{}, fmt.Errorf("list tasks: %w", err)
	}
	out := listOutput{Tasks: make([]taskJSON, 0, len(page.Tasks)), Count: len(page.Tasks)}
	for _, t := range page.Tasks {
		out.Tasks = append(out.Tasks, toJSON(t))
	}
	if page.Next != 0 {
		next := pages.Encode(page.Next)
		out.NextCursor = &next
	}
	return toolkit.Result{Data: out, Message: fmt.Sprintf("Found %d task(s)", out.Count)}, nil
}

// taskQuery turns list_tasks arguments into a store query, reading the
// cursor in its scope.
func taskQuery(in listInput, pages cursor.Scope) (store.TaskQuery, error) {
	q := store.TaskQuery{Status: in.Status, Limit: int(in.Limit)}
	switch in.Status {
	case "", store.TaskPending, store.TaskCompleted:
	default:
		return q, toolerr.Field("status", "must be one of %q, %q", store.TaskPending, store.TaskCompleted)
	}
	return q, pages.Decode(in.Cursor, &q.After)
}
