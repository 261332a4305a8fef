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

// cursorKind tags list_tasks cursors; the position is the last id shown.
const cursorKind = "t"

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

// list returns one page of tasks in ascending id order.
func (s service) list(ctx context.Context, call toolkit.Call, in listInput) (toolkit.Result, error) {
	q, err := taskQuery(in)
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
		next := cursor.EncodeID(cursorKind, page.Next)
		out.NextCursor = &next
	}
	return toolkit.Result{Data: out, Message: fmt.Sprintf("Found %d task(s)", out.Count)}, nil
}

// taskQuery turns list_tasks arguments into a store query.
func taskQuery(in listInput) (store.TaskQuery, error) {
	q := store.TaskQuery{Status: in.Status, Limit: int(in.Limit)}
	switch in.Status {
	case "", store.TaskPending, store.TaskCompleted:
	default:
		return q, toolerr.Field("status", "must be one of %q, %q", store.TaskPending, store.TaskCompleted)
	}
	if in.Cursor != "" {
		after, err := cursor.DecodeID(cursorKind, in.Cursor)
		if err != nil {
			return q, err
		}
		q.After = after
	}
	return q, nil
}
