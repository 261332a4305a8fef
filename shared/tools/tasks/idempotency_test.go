package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/tasks"
)

// replayedTask is a task as add_task returns it, with its replayed flag.
type replayedTask struct {
	task
	Replayed *bool `json:"replayed"`
}

// TestAddIdempotencyKey: add_task with an idempotencyKey, through the
// pipeline, on both backends.
func TestAddIdempotencyKey(t *testing.T) {
	for _, be := range tooltest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Run("replay", func(t *testing.T) { testAddReplay(t, be.NewStores(t)) })
			t.Run("replay after delete", func(t *testing.T) { testAddReplayAfterDelete(t, be.NewStores(t)) })
			t.Run("invalid keys", func(t *testing.T) { testAddInvalidKeys(t, be.NewStores(t)) })
			t.Run("concurrent", func(t *testing.T) { testAddConcurrentKey(t, be.NewStores(t)) })
		})
	}
}

func testAddReplay(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	var first replayedTask
	o := e.OK(t, alice, tasks.AddTool, `{"title":"Pay rent","idempotencyKey":"req-1"}`, &first)
	if first.ID != 1 || first.Replayed != nil || strings.Contains(string(o.Result), "replayed") || o.Message != "Task created successfully" {
		t.Fatalf("first call: %s (message %q), want task 1 created, no replayed field", o.Result, o.Message)
	}
	e.OK(t, alice, tasks.CompleteTool, `{"task_id":1}`, nil)

	// The retry, whatever its title, answers task 1 as it is now.
	var again replayedTask
	o = e.OK(t, alice, tasks.AddTool, `{"title":"Pay rent twice","idempotencyKey":"req-1"}`, &again)
	if again.ID != 1 || again.Title != "Pay rent" || again.Status != "completed" || again.Replayed == nil || !*again.Replayed {
		t.Fatalf("retry: %s, want task 1 completed, replayed", o.Result)
	}
	if o.Message != "Task already created with this idempotency key" {
		t.Errorf("retry message %q", o.Message)
	}
	// Another key, no key, another tenant: new tasks.
	if got := e.add(t, alice, `{"title":"Pay rent","idempotencyKey":"req-2"}`); got.ID != 2 {
		t.Errorf("another key made task %d, want 2", got.ID)
	}
	if got := e.add(t, alice, `{"title":"Pay rent"}`); got.ID != 3 {
		t.Errorf("no key made task %d, want 3", got.ID)
	}
	var bobs replayedTask
	e.OK(t, bob, tasks.AddTool, `{"title":"Bob's","idempotencyKey":"req-1"}`, &bobs)
	if bobs.ID != 1 || bobs.Title != "Bob's" || bobs.Replayed != nil {
		t.Errorf("bob with alice's key: %+v, want his own new task 1", bobs)
	}
	if got := ids(e.all(t, alice, "", 100)); fmt.Sprint(got) != "[1 2 3]" {
		t.Errorf("alice's tasks %v, want [1 2 3]", got)
	}
}

func testAddReplayAfterDelete(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	e.add(t, alice, `{"title":"x","idempotencyKey":"gone"}`)
	e.OK(t, alice, tasks.DeleteTool, `{"task_id":1}`, nil)
	err := e.Fail(t, alice, tasks.AddTool, `{"title":"x","idempotencyKey":"gone"}`, toolerr.ResourceNotFound)
	if err.Message != "The task created with this idempotency key was deleted" || err.Details["idempotencyKey"] != "gone" {
		t.Errorf("replay after delete: %+v", err)
	}
	if got := e.all(t, alice, "", 100); len(got) != 0 {
		t.Errorf("tasks after the replay: %v", ids(got))
	}
}

func testAddInvalidKeys(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	for _, key := range []string{`""`, `"a b"`, `"a/b"`, `"é"`, `"` + strings.Repeat("k", 129) + `"`, `7`, `null`} {
		err := e.Fail(t, alice, tasks.AddTool, `{"title":"x","idempotencyKey":`+key+`}`, toolerr.InvalidInput)
		if !strings.Contains(err.Message, "idempotencyKey") {
			t.Errorf("key %s: message %q does not name idempotencyKey", key, err.Message)
		}
	}
	err := e.Fail(t, alice, tasks.AddTool, `{"title":"x","idempotencyKey":"a b"}`, toolerr.InvalidInput)
	if !strings.Contains(err.Message, "must be 1-128 letters, digits") {
		t.Errorf("pattern message %q", err.Message)
	}
	if got := e.all(t, alice, "", 100); len(got) != 0 {
		t.Errorf("tasks after invalid keys: %v", ids(got))
	}
}

// testAddConcurrentKey: calls with one key at once make one task; each
// answers it or says the key is in progress (DynamoDB), to be retried.
func testAddConcurrentKey(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	const n = 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	made, inProgress := 0, 0
	for i := range n {
		wg.Go(func() {
			o := e.Call(alice, tasks.AddTool, fmt.Sprintf(`{"title":"racer %d","idempotencyKey":"race"}`, i))
			mu.Lock()
			defer mu.Unlock()
			if !o.OK {
				if o.Error.Code != toolerr.StorageError || o.Error.RetryAfter < 1 || o.Error.Details["outcome"] != "unknown" {
					t.Errorf("call %d: %+v, want success or an in-progress STORAGE_ERROR", i, o.Error)
				}
				inProgress++
				return
			}
			var got replayedTask
			if err := json.Unmarshal(o.Result, &got); err != nil || got.ID != 1 {
				t.Errorf("call %d answered %s, want task 1", i, o.Result)
			}
			if got.Replayed == nil {
				made++
			}
		})
	}
	wg.Wait()
	if made != 1 {
		t.Errorf("%d calls made the task (%d in progress), want 1", made, inProgress)
	}
	if got := ids(e.all(t, alice, "", 100)); fmt.Sprint(got) != "[1]" {
		t.Errorf("tasks %v, want [1]", got)
	}
}

// inProgress is a store whose Create finds its key held by another request.
type inProgress struct{ store.Tasks }

func (inProgress) Create(context.Context, string, store.NewTask, time.Time) (store.Task, error) {
	return store.Task{}, fmt.Errorf("dynamodb: %w", &store.InProgressError{RetryAfter: 12 * time.Second})
}

// TestAddKeyInProgress: the answer when another request holds the key
// says to retry with it later, and that the outcome is not known yet.
func TestAddKeyInProgress(t *testing.T) {
	st := tooltest.BoltStores(t)
	h := tooltest.New(t, st, tasks.Tools(inProgress{st.Tasks}, nil, cursor.RandomKey()))
	err := h.Fail(t, alice, tasks.AddTool, `{"title":"x","idempotencyKey":"k"}`, toolerr.StorageError)
	if err.RetryAfter != 12 || err.Details["outcome"] != "unknown" ||
		!strings.Contains(err.Message, "retry with the same idempotencyKey in 12 s") {
		t.Errorf("in progress: %+v", err)
	}
}
