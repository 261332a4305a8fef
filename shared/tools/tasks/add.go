package tasks

import (
	"context"
	"fmt"

	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/toolkit"
)

type addInput struct {
	Title       string  `json:"title"`
	Description *string `json:"description"`
}

// add creates a pending task.
func (s service) add(ctx context.Context, call toolkit.Call, in addInput) (toolkit.Result, error) {
	title, err := cleanTitle(in.Title)
	if err != nil {
		return toolkit.Result{}, err
	}
	description, err := cleanDescription(in.Description)
	if err != nil {
		return toolkit.Result{}, err
	}
	t, err := s.tasks.Create(ctx, call.Tenant, store.NewTask{Title: title, Description: description}, s.now())
	if err != nil {
		return toolkit.Result{}, fmt.Errorf("create task: %w", err)
	}
	return toolkit.Result{Data: toJSON(t), Message: "Task created successfully"}, nil
}
