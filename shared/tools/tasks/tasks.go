// Package tasks implements the task tools over store.Tasks:
// add_task, list_tasks, update_task, complete_task and delete_task.
//
// Beyond what the contracts' input schemas check, the tools enforce the
// seed's rules on the trimmed text: a title is 1-255 characters after
// trimming, a description at most 1000 and an empty one is stored as null.
// Ids are issued per tenant (1, 2, 3…) and never reused; a task of another
// tenant is simply not found. Times are RFC 3339 in UTC.
//
// add_task takes an optional idempotencyKey: a call with a key the tenant
// used before creates nothing and answers the task the first call created
// (replayed: true), so a client whose answer was lost or whose outcome is
// unknown can retry safely. The other writes are idempotent by nature.
package tasks

import (
	"errors"
	"fmt"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/wiring"
)

// Tool names, as in contracts/.
const (
	AddTool      = "add_task"
	ListTool     = "list_tasks"
	UpdateTool   = "update_task"
	CompleteTool = "complete_task"
	DeleteTool   = "delete_task"
)

// Family registers the task tools over the Tasks table.
var Family = family.Family{
	Name:  "tasks",
	Tools: []string{AddTool, ListTool, UpdateTool, CompleteTool, DeleteTool},
	Grants: []family.Grant{
		// add_task: the id counter (UpdateItem ADD), then a conditional
		// PutItem; with an idempotency key, its claim item too (GetItem,
		// PutItem, UpdateItem), the task a replay returns (GetItem), and a
		// Query for the task of a claim left pending.
		family.Table(config.TasksTable, "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem").For(AddTool),
		family.Table(config.TasksTable, "dynamodb:Query").For(ListTool),
		family.Table(config.TasksTable, "dynamodb:GetItem", "dynamodb:UpdateItem").For(UpdateTool, CompleteTool),
		family.Table(config.TasksTable, "dynamodb:DeleteItem").For(DeleteTool),
	},
	// list_tasks' cursors need the deployment's key; no other task tool
	// reads it.
	Settings: []family.Setting{family.Only(wiring.CursorKey, ListTool)},
	New: family.OverStores(ListTool, func(st store.Stores, now func() time.Time, cursors cursor.Key) []toolkit.Tool {
		return Tools(st.Tasks, now, cursors)
	}),
}

// service holds what every task tool needs.
type service struct {
	tasks   store.Tasks
	now     func() time.Time
	cursors cursor.Key // list_tasks'
}

// Tools returns the five task tools over tasks. now is the clock that
// stamps created_at, updated_at and completed_at; nil means time.Now.
// cursors authenticates list_tasks' cursors.
func Tools(tasks store.Tasks, now func() time.Time, cursors cursor.Key) []toolkit.Tool {
	if now == nil {
		now = time.Now
	}
	s := service{tasks: tasks, now: now, cursors: cursors}
	return []toolkit.Tool{
		{Name: AddTool, Handler: toolkit.Typed(s.add)},
		{Name: ListTool, Handler: toolkit.Typed(s.list)},
		{Name: UpdateTool, Handler: toolkit.Typed(s.update)},
		{Name: CompleteTool, Handler: toolkit.Typed(s.complete)},
		{Name: DeleteTool, Handler: toolkit.Typed(s.delete)},
	}
}

// taskJSON is a task as the contracts' outputSchema describes it.
type taskJSON struct {
	ID          int64            `json:"id"`
	Title       string           `json:"title"`
	Description *string          `json:"description"`
	Status      store.TaskStatus `json:"status"`
	CreatedAt   string           `json:"created_at"`
	UpdatedAt   string           `json:"updated_at"`
	CompletedAt *string          `json:"completed_at"`
}

func toJSON(t store.Task) taskJSON {
	out := taskJSON{
		ID:          t.ID,
		Title:       t.Title,
		Description: t.Description,
		Status:      t.Status,
		CreatedAt:   formatTime(t.CreatedAt),
		UpdatedAt:   formatTime(t.UpdatedAt),
	}
	if t.CompletedAt != nil {
		s := formatTime(*t.CompletedAt)
		out.CompletedAt = &s
	}
	return out
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// taskID checks a task_id argument (the schema already has: this guards
// against a contract that stops doing so).
func taskID(n schema.Int) (int64, error) {
	if n < 1 {
		return 0, toolerr.Field("task_id", "must be at least 1")
	}
	return int64(n), nil
}

// notFound is the RESOURCE_NOT_FOUND error for a task id (NOT_FOUND in
// the task-API envelope).
func notFound(id int64) error {
	return toolerr.New(toolerr.ResourceNotFound, "Task %d not found", id).With("task_id", id)
}

// storeError turns the store's ErrNotFound into notFound(id) and wraps any
// other failure with what was being done (storage failures keep wrapping
// store.ErrStorage, which the pipeline reports as STORAGE_ERROR).
func storeError(err error, op string, id int64) error {
	if errors.Is(err, store.ErrNotFound) {
		return notFound(id)
	}
	return fmt.Errorf("%s task %d: %w", op, id, err)
}
