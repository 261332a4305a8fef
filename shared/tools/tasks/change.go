package tasks

import (
	"context"
	"encoding/json"

	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// idInput is the argument of complete_task and delete_task.
type idInput struct {
	TaskID schema.Int `json:"task_id"`
}

type updateInput struct {
	TaskID      schema.Int `json:"task_id"`
	Title       *string    `json:"title"`
	Description nullable   `json:"description"`
}

// nullable is an argument that may be left out, null or a string; update
// needs to tell "left out" (keep) from null (clear).
type nullable struct {
	Set   bool
	Value *string
}

// UnmarshalJSON implements json.Unmarshaler; it is only called when the
// field is present, null included.
func (n *nullable) UnmarshalJSON(b []byte) error {
	n.Set = true
	return json.Unmarshal(b, &n.Value)
}

type deleteOutput struct {
	Deleted bool     `json:"deleted"`
	TaskID  int64    `json:"task_id"`
	Task    taskJSON `json:"task"`
}

// update changes the title and/or description of a task.
func (s service) update(ctx context.Context, call toolkit.Call, in updateInput) (toolkit.Result, error) {
	id, err := taskID(in.TaskID)
	if err != nil {
		return toolkit.Result{}, err
	}
	patch, err := taskPatch(in)
	if err != nil {
		return toolkit.Result{}, err
	}
	t, err := s.tasks.Update(ctx, call.Tenant, id, patch, s.now())
	if err != nil {
		return toolkit.Result{}, storeError(err, "update", id)
	}
	return toolkit.Result{Data: toJSON(t), Message: "Task updated successfully"}, nil
}

// taskPatch turns update_task arguments into a store patch.
func taskPatch(in updateInput) (store.TaskPatch, error) {
	var p store.TaskPatch
	if in.Title == nil && !in.Description.Set {
		return p, toolerr.Field("arguments", "give title, description or both")
	}
	if in.Title != nil {
		title, err := cleanTitle(*in.Title)
		if err != nil {
			return p, err
		}
		p.Title = &title
	}
	if in.Description.Set {
		description, err := cleanDescription(in.Description.Value)
		if err != nil {
			return p, err
		}
		p.SetDescription, p.Description = true, description
	}
	return p, nil
}

// complete marks a task completed. A task that is already completed is
// returned unchanged, so completed_at and updated_at keep their values.
func (s service) complete(ctx context.Context, call toolkit.Call, in idInput) (toolkit.Result, error) {
	id, err := taskID(in.TaskID)
	if err != nil {
		return toolkit.Result{}, err
	}
	t, err := s.tasks.Get(ctx, call.Tenant, id)
	if err != nil {
		return toolkit.Result{}, storeError(err, "get", id)
	}
	if t.Status != store.TaskCompleted {
		if t, err = s.tasks.Complete(ctx, call.Tenant, id, s.now()); err != nil {
			return toolkit.Result{}, storeError(err, "complete", id)
		}
	}
	return toolkit.Result{Data: toJSON(t), Message: "Task completed successfully"}, nil
}

// delete removes a task and returns it as it was.
func (s service) delete(ctx context.Context, call toolkit.Call, in idInput) (toolkit.Result, error) {
	id, err := taskID(in.TaskID)
	if err != nil {
		return toolkit.Result{}, err
	}
	t, err := s.tasks.Delete(ctx, call.Tenant, id)
	if err != nil {
		return toolkit.Result{}, storeError(err, "delete", id)
	}
	out := deleteOutput{Deleted: true, TaskID: id, Task: toJSON(t)}
	return toolkit.Result{Data: out, Message: "Task deleted successfully"}, nil
}
