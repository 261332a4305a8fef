package tasks

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

type addInput struct {
	Title          string  `json:"title"`
	Description    *string `json:"description"`
	IdempotencyKey string  `json:"idempotencyKey"` // "" when left out; the schema checks its form
}

// addOutput is the created task; Replayed is there only when an earlier
// call with the same idempotency key created it.
type addOutput struct {
	taskJSON
	Replayed bool `json:"replayed,omitempty"`
}

// add creates a pending task, once per idempotency key when one is given.
func (s service) add(ctx context.Context, call toolkit.Call, in addInput) (toolkit.Result, error) {
	title, err := cleanTitle(in.Title)
	if err != nil {
		return toolkit.Result{}, err
	}
	description, err := cleanDescription(in.Description)
	if err != nil {
		return toolkit.Result{}, err
	}
	t, err := s.tasks.Create(ctx, call.Tenant, store.NewTask{Title: title, Description: description, IdempotencyKey: in.IdempotencyKey}, s.now())
	if errors.Is(err, store.ErrNotFound) && in.IdempotencyKey != "" {
		return toolkit.Result{}, toolerr.New(toolerr.ResourceNotFound,
			"The task created with this idempotency key was deleted").With("idempotencyKey", in.IdempotencyKey)
	}
	if err != nil {
		return toolkit.Result{}, fmt.Errorf("create task: %w", err)
	}
	out := addOutput{taskJSON: toJSON(t), Replayed: t.Replayed}
	if t.Replayed {
		return toolkit.Result{Data: out, Message: "Task already created with this idempotency key"}, nil
	}
	return toolkit.Result{Data: out, Message: "Task created successfully"}, nil
}
