package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/store"
)

// taskIdempotencyChecks check Tasks.Create with idempotency keys.
var taskIdempotencyChecks = []check{
	{"Replay", taskKeyReplay},
	{"DifferentKeys", taskKeyDifferentKeys},
	{"PerTenant", taskKeyPerTenant},
	{"ReplayAfterDelete", taskKeyReplayAfterDelete},
	{"Concurrent", taskKeyConcurrent},
}

// memoryIdempotencyChecks check Memory.Append with idempotency keys.
var memoryIdempotencyChecks = []check{
	{"Replay", memoryKeyReplay},
	{"PerFileAndTenant", memoryKeyPerFileAndTenant},
	{"Concurrent", memoryKeyConcurrent},
}

func taskKeyReplay(t *testing.T, st store.Stores) {
	tasks, ctx, clk := st.Tasks, t.Context(), newClock()
	first, err := tasks.Create(ctx, "acme", store.NewTask{Title: "first", Description: ptr("d"), IdempotencyKey: "k-1"}, clk.next())
	noErr(t, err, "create")
	if first.ID != 1 || first.Replayed {
		t.Fatalf("first create = id %d replayed %v, want id 1, not replayed", first.ID, first.Replayed)
	}
	// The same key again, even with other input: nothing is made, the
	// first task comes back as it is now.
	completed, err := tasks.Complete(ctx, "acme", first.ID, clk.next())
	noErr(t, err, "complete")
	for i := range 2 {
		again, err := tasks.Create(ctx, "acme", store.NewTask{Title: "second", IdempotencyKey: "k-1"}, clk.next())
		noErr(t, err, "replay")
		if !again.Replayed {
			t.Fatalf("replay %d: Replayed not set", i)
		}
		sameTask(t, again, completed, fmt.Sprintf("replay %d", i))
	}
	// Replays burn no id, and keyless Creates are not replays.
	next, err := tasks.Create(ctx, "acme", store.NewTask{Title: "no key"}, clk.next())
	noErr(t, err, "create without key")
	if next.ID != 2 || next.Replayed {
		t.Fatalf("create without key = id %d replayed %v, want id 2, not replayed", next.ID, next.Replayed)
	}
	stored, err := tasks.Get(ctx, "acme", first.ID)
	noErr(t, err, "get")
	if stored.Replayed {
		t.Fatal("Get sets Replayed")
	}
	page, err := tasks.List(ctx, "acme", store.TaskQuery{})
	noErr(t, err, "list")
	if got := taskIDs(page.Tasks); !slices.Equal(got, []int64{1, 2}) || page.Next != 0 {
		t.Fatalf("list ids = %v, want [1 2]", got)
	}
	for _, task := range page.Tasks {
		if task.Replayed {
			t.Fatalf("List sets Replayed on task %d", task.ID)
		}
	}
}

func taskKeyDifferentKeys(t *testing.T, st store.Stores) {
	tasks, ctx, clk := st.Tasks, t.Context(), newClock()
	keys := []string{"a", "b", "A", "a.b:c-d_e", strings.Repeat("k", 128)}
	for i, key := range keys {
		task, err := tasks.Create(ctx, "acme", store.NewTask{Title: key, IdempotencyKey: key}, clk.next())
		noErr(t, err, "create "+key)
		if task.ID != int64(i+1) || task.Replayed {
			t.Fatalf("key %q: id %d replayed %v, want id %d, not replayed", key, task.ID, task.Replayed, i+1)
		}
	}
	for i, key := range keys {
		task, err := tasks.Create(ctx, "acme", store.NewTask{Title: "again", IdempotencyKey: key}, clk.next())
		noErr(t, err, "replay "+key)
		if task.ID != int64(i+1) || task.Title != key || !task.Replayed {
			t.Fatalf("replay of %q = id %d title %q replayed %v, want id %d", key, task.ID, task.Title, task.Replayed, i+1)
		}
	}
	got := collectTasks(t, tasks, "acme", store.TaskQuery{})
	if !slices.Equal(got, seq(1, int64(len(keys)))) {
		t.Fatalf("list ids = %v, want 1..%d", got, len(keys))
	}
}

func taskKeyPerTenant(t *testing.T, st store.Stores) {
	tasks, ctx, clk := st.Tasks, t.Context(), newClock()
	// beta's key of the same name is its own: a new task, and alpha's
	// stays alpha's.
	_, err := tasks.Create(ctx, "alpha", store.NewTask{Title: "alpha 1"}, clk.next())
	noErr(t, err, "alpha create")
	mine, err := tasks.Create(ctx, "alpha", store.NewTask{Title: "alpha's", IdempotencyKey: "shared"}, clk.next())
	noErr(t, err, "alpha create with key")
	for _, tenant := range []string{"beta", "alpha2", "alph"} {
		theirs, err := tasks.Create(ctx, tenant, store.NewTask{Title: tenant + "'s", IdempotencyKey: "shared"}, clk.next())
		noErr(t, err, tenant+" create with key")
		if theirs.Replayed || theirs.ID != 1 || theirs.Title != tenant+"'s" {
			t.Fatalf("%s's create with alpha's key = %s replayed %v, want its own task 1", tenant, formatTask(theirs), theirs.Replayed)
		}
	}
	again, err := tasks.Create(ctx, "alpha", store.NewTask{Title: "x", IdempotencyKey: "shared"}, clk.next())
	noErr(t, err, "alpha replay")
	if !again.Replayed {
		t.Fatal("alpha's replay: Replayed not set")
	}
	sameTask(t, again, mine, "alpha's replay")
	page, err := tasks.List(ctx, "beta", store.TaskQuery{})
	noErr(t, err, "beta list")
	if got := taskIDs(page.Tasks); !slices.Equal(got, []int64{1}) {
		t.Fatalf("beta list = %v, want [1]", got)
	}
}

func taskKeyReplayAfterDelete(t *testing.T, st store.Stores) {
	tasks, ctx, clk := st.Tasks, t.Context(), newClock()
	created, err := tasks.Create(ctx, "acme", store.NewTask{Title: "t", IdempotencyKey: "gone"}, clk.next())
	noErr(t, err, "create")
	_, err = tasks.Delete(ctx, "acme", created.ID)
	noErr(t, err, "delete")
	for range 2 {
		_, err = tasks.Create(ctx, "acme", store.NewTask{Title: "t", IdempotencyKey: "gone"}, clk.next())
		wantErr(t, err, store.ErrNotFound, "replay after delete")
		if !strings.Contains(err.Error(), "the task created with this idempotency key") || !strings.Contains(err.Error(), "was deleted") {
			t.Fatalf("replay after delete: error %q does not say the task created with this key was deleted", err)
		}
	}
	// Nothing was made, and the key does not come back.
	page, err := tasks.List(ctx, "acme", store.TaskQuery{})
	noErr(t, err, "list")
	if len(page.Tasks) != 0 {
		t.Fatalf("list after replays of a deleted task = %v, want empty", taskIDs(page.Tasks))
	}
	next, err := tasks.Create(ctx, "acme", store.NewTask{Title: "t", IdempotencyKey: "new"}, clk.next())
	noErr(t, err, "create with another key")
	if next.ID != 2 {
		t.Fatalf("next id = %d, want 2", next.ID)
	}
}

func taskKeyConcurrent(t *testing.T, st store.Stores) {
	tasks, ctx, clk := st.Tasks, t.Context(), newClock()
	now := clk.next()
	id := raceOneKey(t, "create", "task", func(i int) (written[int64], error) {
		task, err := tasks.Create(ctx, "acme", store.NewTask{Title: fmt.Sprintf("racer %d", i), IdempotencyKey: "race"}, now)
		return written[int64]{task.ID, task.Replayed}, err
	})
	page, err := tasks.List(ctx, "acme", store.TaskQuery{})
	noErr(t, err, "list")
	if ids := taskIDs(page.Tasks); !slices.Equal(ids, []int64{id}) {
		t.Fatalf("list ids = %v, want [%d]", ids, id)
	}
	// Every later call replays it.
	again, err := tasks.Create(ctx, "acme", store.NewTask{Title: "late", IdempotencyKey: "race"}, clk.next())
	noErr(t, err, "replay")
	if !again.Replayed || again.ID != id {
		t.Fatalf("late replay = id %d replayed %v, want id %d replayed", again.ID, again.Replayed, id)
	}
}

func memoryKeyReplay(t *testing.T, st store.Stores) {
	mem, ctx, clk := st.Memory, t.Context(), newClock()
	first, err := mem.Append(ctx, "acme", "log", store.NewEntry{Content: "first", IdempotencyKey: "k"}, clk.next())
	noErr(t, err, "append")
	if first.Replayed {
		t.Fatal("first append is marked Replayed")
	}
	for i := range 2 {
		again, err := mem.Append(ctx, "acme", "log", store.NewEntry{Content: "second", IdempotencyKey: "k"}, clk.next())
		noErr(t, err, "replay")
		if !again.Replayed {
			t.Fatalf("replay %d: Replayed not set", i)
		}
		again.Replayed = false
		sameEntries(t, []store.MemoryEntry{again}, []store.MemoryEntry{first})
	}
	other, err := mem.Append(ctx, "acme", "log", store.NewEntry{Content: "no key"}, clk.next())
	noErr(t, err, "append without key")
	if other.Replayed || other.ID == first.ID {
		t.Fatalf("append without key = %+v, want a new entry", other)
	}
	page, err := mem.List(ctx, "acme", "log", store.MemoryQuery{})
	noErr(t, err, "list")
	sameEntries(t, page.Entries, []store.MemoryEntry{first, other})
	for _, e := range page.Entries {
		if e.Replayed {
			t.Fatalf("List sets Replayed on %s", e.ID)
		}
	}
}

func memoryKeyPerFileAndTenant(t *testing.T, st store.Stores) {
	mem, ctx, clk := st.Memory, t.Context(), newClock()
	writes := []tenantFile{
		{"alpha", "a.md"}, {"alpha", "b.md"}, {"beta", "a.md"},
		{"x#y", "z"}, {"x", "y#z"}, {"%idem", "a.md"},
	}
	var made []store.MemoryEntry
	for _, w := range writes {
		e, err := mem.Append(ctx, w.tenant, w.file, store.NewEntry{Content: w.tenant + "/" + w.file, IdempotencyKey: "same"}, clk.next())
		noErr(t, err, "append")
		if e.Replayed {
			t.Fatalf("%s %s: the first append with the key is a replay of %q", w.tenant, w.file, e.Content)
		}
		made = append(made, e)
	}
	for i, w := range writes {
		e, err := mem.Append(ctx, w.tenant, w.file, store.NewEntry{Content: "again", IdempotencyKey: "same"}, clk.next())
		noErr(t, err, "replay")
		if !e.Replayed || e.ID != made[i].ID || e.Content != made[i].Content {
			t.Fatalf("%s %s: replay = %+v, want %+v", w.tenant, w.file, e, made[i])
		}
		page, err := mem.List(ctx, w.tenant, w.file, store.MemoryQuery{})
		noErr(t, err, "list")
		if len(page.Entries) != 1 || page.Entries[0].ID != made[i].ID {
			t.Fatalf("list %s %s = %+v, want only its own entry", w.tenant, w.file, page.Entries)
		}
	}
}

func memoryKeyConcurrent(t *testing.T, st store.Stores) {
	mem, ctx := st.Memory, t.Context()
	now := newClock().next()
	id := raceOneKey(t, "append", "entry", func(i int) (written[string], error) {
		e, err := mem.Append(ctx, "acme", "log", store.NewEntry{Content: fmt.Sprint(i), IdempotencyKey: "race"}, now)
		return written[string]{e.ID, e.Replayed}, err
	})
	page, err := mem.List(ctx, "acme", "log", store.MemoryQuery{})
	noErr(t, err, "list")
	if len(page.Entries) != 1 || page.Entries[0].ID != id {
		t.Fatalf("list = %+v, want the one entry %s", page.Entries, id)
	}
}

// written is what one write with an idempotency key answered: the id of
// what it made or replayed, and whether it replayed.
type written[ID comparable] struct {
	id       ID
	replayed bool
}

// raceOneKey makes 20 writes with one idempotency key at once (verb
// names a write in messages, item what it makes). Each must make the
// item, replay it, or find the key held by a write in progress (on
// DynamoDB); exactly one makes it, and all that succeed answer its id,
// which raceOneKey returns.
func raceOneKey[ID comparable](t *testing.T, verb, item string, write func(i int) (written[ID], error)) ID {
	t.Helper()
	const n = 20
	got, errs := atOnce(n, write)
	made, failed := 0, 0
	var id, none ID
	for i := range n {
		if errs[i] != nil {
			var inProgress *store.InProgressError
			if !errors.As(errs[i], &inProgress) || !errors.Is(errs[i], store.ErrConflict) || inProgress.RetryAfter <= 0 {
				t.Fatalf("%s %d: error = %v, want success or an InProgressError", verb, i, errs[i])
			}
			failed++
			continue
		}
		if !got[i].replayed {
			made++
		}
		if id != none && got[i].id != id {
			t.Fatalf("%ss with one key answered ids %v and %v", verb, id, got[i].id)
		}
		id = got[i].id
	}
	t.Logf("of %d %ss with one key: 1 made the %s, %d replayed it, %d found it in progress", n, verb, item, n-made-failed, failed)
	if made != 1 {
		t.Fatalf("%d %ss made the %s, want exactly 1", made, verb, item)
	}
	return id
}
