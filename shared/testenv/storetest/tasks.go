package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/toolshed/toolshed/shared/store"
)

// taskChecks check store.Tasks without idempotency keys.
var taskChecks = []check{
	{"IDsCountPerTenant", tasksIDsCountPerTenant},
	{"CreateAndGet", tasksCreateAndGet},
	{"CreateCopiesInput", tasksCreateCopiesInput},
	{"MissingIDs", tasksMissingIDs},
	{"UpdatePatch", tasksUpdatePatch},
	{"UpdateKeepsCompletion", tasksUpdateKeepsCompletion},
	{"CompleteTwiceKeepsFirstCompletedAt", tasksCompleteTwiceKeepsFirstCompletedAt},
	{"Delete", tasksDelete},
	{"TenantIsolation", tasksTenantIsolation},
	{"ListOrderAndStatus", tasksListOrderAndStatus},
	{"ListPaging", tasksListPaging},
	{"ConcurrentCreate", tasksConcurrentCreate},
}

func tasksIDsCountPerTenant(t *testing.T, st store.Stores) {
	ctx, clk := t.Context(), newClock()
	var got []int64
	for _, tenant := range []string{"alpha", "alpha", "alpha", "beta", "beta", "alpha", "gamma"} {
		task, err := st.Tasks.Create(ctx, tenant, store.NewTask{Title: "t"}, clk.next())
		noErr(t, err, "create")
		got = append(got, task.ID)
	}
	want := []int64{1, 2, 3, 1, 2, 4, 1}
	if !slices.Equal(got, want) {
		t.Fatalf("ids = %v, want %v", got, want)
	}
}

func tasksCreateAndGet(t *testing.T, st store.Stores) {
	tasks, ctx, clk := st.Tasks, t.Context(), newClock()
	cases := []struct {
		name string
		in   store.NewTask
	}{
		{"no description", store.NewTask{Title: "Write tests"}},
		{"description", store.NewTask{Title: "Ship", Description: ptr("to production\nwith care ✓")}},
		{"empty description", store.NewTask{Title: "Empty", Description: ptr("")}},
	}
	for i, tc := range cases {
		now := clk.next()
		got, err := tasks.Create(ctx, "acme", tc.in, now)
		noErr(t, err, tc.name)
		want := store.Task{
			ID:          int64(i + 1),
			Title:       tc.in.Title,
			Description: tc.in.Description,
			Status:      store.TaskPending,
			CreatedAt:   now,
			UpdatedAt:   now,
		}
		sameTask(t, got, want, tc.name+": created")
		sameStored(t, tasks, "acme", want, tc.name+": stored")
	}
}

func tasksCreateCopiesInput(t *testing.T, st store.Stores) {
	tasks, ctx := st.Tasks, t.Context()
	desc := "original"
	created, err := tasks.Create(ctx, "acme", store.NewTask{Title: "t", Description: &desc}, newClock().next())
	noErr(t, err, "create")
	desc = "changed by caller"
	stored, err := tasks.Get(ctx, "acme", created.ID)
	noErr(t, err, "get")
	if *created.Description != "original" || *stored.Description != "original" {
		t.Fatalf("description follows the caller's variable: created %q, stored %q", *created.Description, *stored.Description)
	}
}

func tasksMissingIDs(t *testing.T, st store.Stores) {
	tasks, ctx, clk := st.Tasks, t.Context(), newClock()
	// Before the tenant has any task, and for ids that can never exist.
	for _, id := range []int64{1, 0, -1, 999} {
		what := fmt.Sprintf("id %d", id)
		_, err := tasks.Get(ctx, "acme", id)
		wantErr(t, err, store.ErrNotFound, what+": get")
		_, err = tasks.Update(ctx, "acme", id, store.TaskPatch{Title: ptr("x")}, clk.next())
		wantErr(t, err, store.ErrNotFound, what+": update")
		_, err = tasks.Complete(ctx, "acme", id, clk.next())
		wantErr(t, err, store.ErrNotFound, what+": complete")
		_, err = tasks.Delete(ctx, "acme", id)
		wantErr(t, err, store.ErrNotFound, what+": delete")
	}
	// Nothing was created, and the counter was not touched.
	page, err := tasks.List(ctx, "acme", store.TaskQuery{})
	noErr(t, err, "list")
	if len(page.Tasks) != 0 || page.Next != 0 {
		t.Fatalf("list after failed writes = %v (next %d), want empty", taskIDs(page.Tasks), page.Next)
	}
	first, err := tasks.Create(ctx, "acme", store.NewTask{Title: "first"}, clk.next())
	noErr(t, err, "create")
	if first.ID != 1 {
		t.Fatalf("first id = %d, want 1", first.ID)
	}
	// With tasks present: ids 0 and 2 are still missing, and touching
	// them changes nothing.
	for _, id := range []int64{0, 2} {
		_, err = tasks.Delete(ctx, "acme", id)
		wantErr(t, err, store.ErrNotFound, fmt.Sprintf("delete %d", id))
		_, err = tasks.Update(ctx, "acme", id, store.TaskPatch{Title: ptr("x")}, clk.next())
		wantErr(t, err, store.ErrNotFound, fmt.Sprintf("update %d", id))
		_, err = tasks.Get(ctx, "acme", id)
		wantErr(t, err, store.ErrNotFound, fmt.Sprintf("get %d", id))
	}
	second, err := tasks.Create(ctx, "acme", store.NewTask{Title: "second"}, clk.next())
	noErr(t, err, "create")
	if second.ID != 2 {
		t.Fatalf("second id = %d, want 2", second.ID)
	}
	page, err = tasks.List(ctx, "acme", store.TaskQuery{})
	noErr(t, err, "list")
	if got := taskIDs(page.Tasks); !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("list ids = %v, want [1 2]", got)
	}
}

func tasksUpdatePatch(t *testing.T, st store.Stores) {
	cases := []struct {
		name      string
		startDesc *string
		patch     store.TaskPatch
		wantTitle string
		wantDesc  *string
	}{
		{"empty patch", ptr("d"), store.TaskPatch{}, "old", ptr("d")},
		{"title only", ptr("d"), store.TaskPatch{Title: ptr("new")}, "new", ptr("d")},
		{"title only keeps no description", nil, store.TaskPatch{Title: ptr("new")}, "new", nil},
		{"description ignored without SetDescription", ptr("d"), store.TaskPatch{Description: ptr("x")}, "old", ptr("d")},
		{"description set", nil, store.TaskPatch{SetDescription: true, Description: ptr("added")}, "old", ptr("added")},
		{"description replaced", ptr("d"), store.TaskPatch{SetDescription: true, Description: ptr("replaced")}, "old", ptr("replaced")},
		{"description cleared", ptr("d"), store.TaskPatch{SetDescription: true}, "old", nil},
		{"clear missing description", nil, store.TaskPatch{SetDescription: true}, "old", nil},
		{"title and description", ptr("d"), store.TaskPatch{Title: ptr("both"), SetDescription: true, Description: ptr("both d")}, "both", ptr("both d")},
	}
	tasks, ctx, clk := st.Tasks, t.Context(), newClock()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			created, err := tasks.Create(ctx, "acme", store.NewTask{Title: "old", Description: tc.startDesc}, clk.next())
			noErr(t, err, "create")
			now := clk.next()
			got, err := tasks.Update(ctx, "acme", created.ID, tc.patch, now)
			noErr(t, err, "update")
			want := created
			want.Title = tc.wantTitle
			want.Description = tc.wantDesc
			want.UpdatedAt = now
			sameTask(t, got, want, "updated")
			sameStored(t, tasks, "acme", want, "stored")
		})
	}
}

func tasksUpdateKeepsCompletion(t *testing.T, st store.Stores) {
	tasks, ctx, clk := st.Tasks, t.Context(), newClock()
	created, err := tasks.Create(ctx, "acme", store.NewTask{Title: "t"}, clk.next())
	noErr(t, err, "create")
	completed, err := tasks.Complete(ctx, "acme", created.ID, clk.next())
	noErr(t, err, "complete")
	now := clk.next()
	got, err := tasks.Update(ctx, "acme", created.ID, store.TaskPatch{Title: ptr("renamed")}, now)
	noErr(t, err, "update")
	want := completed
	want.Title = "renamed"
	want.UpdatedAt = now
	sameTask(t, got, want, "updated")
}

func tasksCompleteTwiceKeepsFirstCompletedAt(t *testing.T, st store.Stores) {
	tasks, ctx, clk := st.Tasks, t.Context(), newClock()
	created, err := tasks.Create(ctx, "acme", store.NewTask{Title: "t", Description: ptr("d")}, clk.next())
	noErr(t, err, "create")

	first := clk.next()
	got, err := tasks.Complete(ctx, "acme", created.ID, first)
	noErr(t, err, "first complete")
	want := created
	want.Status = store.TaskCompleted
	want.UpdatedAt = first
	want.CompletedAt = &first
	sameTask(t, got, want, "first complete")

	second := clk.next()
	got, err = tasks.Complete(ctx, "acme", created.ID, second)
	noErr(t, err, "second complete")
	want.UpdatedAt = second
	sameTask(t, got, want, "second complete")
	sameStored(t, tasks, "acme", want, "stored")
}

func tasksDelete(t *testing.T, st store.Stores) {
	tasks, ctx, clk := st.Tasks, t.Context(), newClock()
	var created []store.Task
	for i := range 3 {
		task, err := tasks.Create(ctx, "acme", store.NewTask{Title: fmt.Sprintf("t%d", i), Description: ptr("d")}, clk.next())
		noErr(t, err, "create")
		created = append(created, task)
	}
	completed, err := tasks.Complete(ctx, "acme", 3, clk.next())
	noErr(t, err, "complete")
	created[2] = completed

	for _, i := range []int{1, 2} {
		got, err := tasks.Delete(ctx, "acme", created[i].ID)
		noErr(t, err, "delete")
		sameTask(t, got, created[i], "deleted task")
		_, err = tasks.Get(ctx, "acme", created[i].ID)
		wantErr(t, err, store.ErrNotFound, "get after delete")
		_, err = tasks.Delete(ctx, "acme", created[i].ID)
		wantErr(t, err, store.ErrNotFound, "delete twice")
		_, err = tasks.Update(ctx, "acme", created[i].ID, store.TaskPatch{Title: ptr("back")}, clk.next())
		wantErr(t, err, store.ErrNotFound, "update after delete")
		_, err = tasks.Complete(ctx, "acme", created[i].ID, clk.next())
		wantErr(t, err, store.ErrNotFound, "complete after delete")
	}
	page, err := tasks.List(ctx, "acme", store.TaskQuery{})
	noErr(t, err, "list")
	if got := taskIDs(page.Tasks); !slices.Equal(got, []int64{1}) {
		t.Fatalf("ids after delete = %v, want [1]", got)
	}
	// Ids are never reused.
	next, err := tasks.Create(ctx, "acme", store.NewTask{Title: "after"}, clk.next())
	noErr(t, err, "create after delete")
	if next.ID != 4 {
		t.Fatalf("id after deleting 2 and 3 = %d, want 4", next.ID)
	}
}

func tasksTenantIsolation(t *testing.T, st store.Stores) {
	tasks, ctx, clk := st.Tasks, t.Context(), newClock()
	mine, err := tasks.Create(ctx, "alpha", store.NewTask{Title: "alpha's", Description: ptr("secret")}, clk.next())
	noErr(t, err, "create")

	_, err = tasks.Get(ctx, "beta", mine.ID)
	wantErr(t, err, store.ErrNotFound, "beta get")
	_, err = tasks.Update(ctx, "beta", mine.ID, store.TaskPatch{Title: ptr("hacked"), SetDescription: true}, clk.next())
	wantErr(t, err, store.ErrNotFound, "beta update")
	_, err = tasks.Complete(ctx, "beta", mine.ID, clk.next())
	wantErr(t, err, store.ErrNotFound, "beta complete")
	_, err = tasks.Delete(ctx, "beta", mine.ID)
	wantErr(t, err, store.ErrNotFound, "beta delete")
	for _, status := range []store.TaskStatus{"", store.TaskPending, store.TaskCompleted} {
		page, err := tasks.List(ctx, "beta", store.TaskQuery{Status: status})
		noErr(t, err, "beta list")
		if len(page.Tasks) != 0 || page.Next != 0 {
			t.Fatalf("beta list %q = %v, want empty", status, taskIDs(page.Tasks))
		}
	}
	// A tenant whose name extends the other's sees nothing either.
	_, err = tasks.Get(ctx, "alpha2", mine.ID)
	wantErr(t, err, store.ErrNotFound, "alpha2 get")

	// beta's own task 1 is separate from alpha's task 1.
	theirs, err := tasks.Create(ctx, "beta", store.NewTask{Title: "beta's"}, clk.next())
	noErr(t, err, "beta create")
	if theirs.ID != mine.ID {
		t.Fatalf("beta's first id = %d, want %d", theirs.ID, mine.ID)
	}
	_, err = tasks.Delete(ctx, "beta", theirs.ID)
	noErr(t, err, "beta delete own")

	sameStored(t, tasks, "alpha", mine, "alpha's task after beta's attempts")
}

func tasksListOrderAndStatus(t *testing.T, st store.Stores) {
	tasks, ctx, clk := st.Tasks, t.Context(), newClock()
	var all []store.Task
	for i := range 5 {
		task, err := tasks.Create(ctx, "acme", store.NewTask{Title: fmt.Sprintf("task %d", i+1)}, clk.next())
		noErr(t, err, "create")
		all = append(all, task)
	}
	for _, id := range []int64{4, 2} {
		task, err := tasks.Complete(ctx, "acme", id, clk.next())
		noErr(t, err, "complete")
		all[id-1] = task
	}
	cases := []struct {
		status store.TaskStatus
		want   []int64
	}{
		{"", []int64{1, 2, 3, 4, 5}},
		{store.TaskPending, []int64{1, 3, 5}},
		{store.TaskCompleted, []int64{2, 4}},
		{"unknown", nil},
	}
	for _, tc := range cases {
		page, err := tasks.List(ctx, "acme", store.TaskQuery{Status: tc.status})
		noErr(t, err, "list")
		if got := taskIDs(page.Tasks); !slices.Equal(got, tc.want) || page.Next != 0 {
			t.Fatalf("list %q = %v next %d, want %v next 0", tc.status, got, page.Next, tc.want)
		}
		for _, task := range page.Tasks {
			sameTask(t, task, all[task.ID-1], "listed task")
		}
	}
}

func tasksListPaging(t *testing.T, st store.Stores) {
	tasks := st.Tasks
	const n = 130 // more than the default limit
	pending, completed := createForPaging(t, tasks, n)
	cases := []struct {
		status store.TaskStatus
		limit  int
		after  int64
		want   []int64
	}{
		{"", 7, 0, seq(1, n)},
		{"", 1, 0, seq(1, n)},
		{"", 65, 0, seq(1, n)},
		{"", n, 0, seq(1, n)},
		{"", n + 50, 0, seq(1, n)},
		{"", 10, 100, seq(101, n)},
		{"", 10, n, nil},
		{"", 10, -5, seq(1, n)},
		{store.TaskPending, 7, 0, pending},
		{store.TaskPending, 50, 60, pending[slices.Index(pending, 61):]},
		{store.TaskCompleted, 3, 0, completed},
		{store.TaskCompleted, 1, 0, completed},
		{store.TaskCompleted, 10, 0, completed},
		{store.TaskCompleted, 0, 0, completed},
		{store.TaskCompleted, 2, 51, completed[3:]},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("status=%q limit=%d after=%d", tc.status, tc.limit, tc.after), func(t *testing.T) {
			got := collectTasks(t, tasks, "acme", store.TaskQuery{Status: tc.status, Limit: tc.limit, After: tc.after})
			if !slices.Equal(got, tc.want) {
				t.Fatalf("ids = %v\nwant %v", got, tc.want)
			}
		})
	}
	t.Run("default limit", func(t *testing.T) { defaultTaskPages(t, tasks, n) })
}

// createForPaging creates acme's tasks 1 to n and completes some of them:
// sparse early on and dense at the end, so filtered pages cross many
// unmatched items. It returns the ids left pending and those completed.
// Another tenant's tasks are created too: they must not show up in any
// page.
func createForPaging(t *testing.T, tasks store.Tasks, n int64) (pending, completed []int64) {
	t.Helper()
	ctx, clk := t.Context(), newClock()
	for i := int64(1); i <= n; i++ {
		_, err := tasks.Create(ctx, "acme", store.NewTask{Title: fmt.Sprintf("task %d", i)}, clk.next())
		noErr(t, err, "create")
	}
	for i := int64(1); i <= n; i++ {
		if i%17 == 0 || i > 120 {
			_, err := tasks.Complete(ctx, "acme", i, clk.next())
			noErr(t, err, "complete")
			completed = append(completed, i)
		} else {
			pending = append(pending, i)
		}
	}
	for range 3 {
		_, err := tasks.Create(ctx, "other", store.NewTask{Title: "other"}, clk.next())
		noErr(t, err, "create other")
	}
	return pending, completed
}

// defaultTaskPages checks that listing acme's n tasks without a limit
// takes two pages, the first of store.DefaultLimit tasks.
func defaultTaskPages(t *testing.T, tasks store.Tasks, n int64) {
	ctx := t.Context()
	page, err := tasks.List(ctx, "acme", store.TaskQuery{})
	noErr(t, err, "list")
	if got := taskIDs(page.Tasks); !slices.Equal(got, seq(1, store.DefaultLimit)) || page.Next != store.DefaultLimit {
		t.Fatalf("default page = %d tasks, next %d; want ids 1..%d, next %d", len(got), page.Next, store.DefaultLimit, store.DefaultLimit)
	}
	page, err = tasks.List(ctx, "acme", store.TaskQuery{After: page.Next})
	noErr(t, err, "list")
	if got := taskIDs(page.Tasks); !slices.Equal(got, seq(store.DefaultLimit+1, n)) || page.Next != 0 {
		t.Fatalf("second default page = %v next %d", got, page.Next)
	}
}

func tasksConcurrentCreate(t *testing.T, st store.Stores) {
	tasks, ctx, clk := st.Tasks, t.Context(), newClock()
	const n = 200
	created, errs := atOnce(n, func(i int) (store.Task, error) {
		return tasks.Create(ctx, "acme", store.NewTask{Title: fmt.Sprintf("parallel %d", i)}, clk.next())
	})
	for i, err := range errs {
		noErr(t, err, fmt.Sprintf("create %d", i))
	}
	ids := taskIDs(created)
	slices.Sort(ids)
	if !slices.Equal(ids, seq(1, n)) {
		t.Fatalf("ids = %v, want 1..%d", ids, n)
	}
	page, err := tasks.List(ctx, "acme", store.TaskQuery{Limit: n})
	noErr(t, err, "list")
	if got := taskIDs(page.Tasks); !slices.Equal(got, seq(1, n)) || page.Next != 0 {
		t.Fatalf("listed %d tasks (next %d), want ids 1..%d", len(got), page.Next, n)
	}
}

// sameStored fails unless tenant's stored task of want's id is want.
func sameStored(t *testing.T, tasks store.Tasks, tenant string, want store.Task, what string) {
	t.Helper()
	stored, err := tasks.Get(t.Context(), tenant, want.ID)
	noErr(t, err, what+": get")
	sameTask(t, stored, want, what)
}

// collectTasks pages through a listing, checking the paging contract, and
// returns all ids.
func collectTasks(t *testing.T, tasks store.Tasks, tenant string, q store.TaskQuery) []int64 {
	t.Helper()
	var ids []int64
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("paging does not end")
		}
		page, err := tasks.List(t.Context(), tenant, q)
		noErr(t, err, "list")
		got := taskIDs(page.Tasks)
		if pages > 0 && len(got) == 0 {
			t.Fatalf("empty page after a next cursor of %d", q.After)
		}
		if len(got) > store.PageLimit(q.Limit) {
			t.Fatalf("page of %d tasks exceeds limit %d", len(got), q.Limit)
		}
		for _, task := range page.Tasks {
			if q.Status != "" && task.Status != q.Status {
				t.Fatalf("task %d has status %q in a %q listing", task.ID, task.Status, q.Status)
			}
		}
		ids = append(ids, got...)
		if page.Next == 0 {
			return ids
		}
		if len(got) != store.PageLimit(q.Limit) {
			t.Fatalf("short page of %d (limit %d) with next %d", len(got), q.Limit, page.Next)
		}
		if page.Next != got[len(got)-1] {
			t.Fatalf("next = %d, want the last id %d", page.Next, got[len(got)-1])
		}
		q.After = page.Next
	}
}
