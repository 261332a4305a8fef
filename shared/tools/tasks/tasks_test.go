package tasks_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/envelope"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/tasks"
)

// Tenants of the tests.
const (
	alice = "alice"
	bob   = "bob"
)

// task is a task as the tools return it.
type task struct {
	ID          int64   `json:"id"`
	Title       string  `json:"title"`
	Description *string `json:"description"`
	Status      string  `json:"status"`
	CreatedAt   string  `json:"created_at"`
	UpdatedAt   string  `json:"updated_at"`
	CompletedAt *string `json:"completed_at"`
}

type listResult struct {
	Tasks      []task  `json:"tasks"`
	Count      int     `json:"count"`
	NextCursor *string `json:"next_cursor"`
}

type deleteResult struct {
	Deleted bool  `json:"deleted"`
	TaskID  int64 `json:"task_id"`
	Task    task  `json:"task"`
}

// env is the task tools over fresh stores, behind the real pipeline, with
// a clock that ticks one second per reading.
type env struct {
	*tooltest.Harness
	clock *tooltest.Clock
}

func newEnv(t *testing.T, st store.Stores) env {
	clock := tooltest.NewClock()
	return env{Harness: tooltest.New(t, st, tasks.Tools(st.Tasks, clock.Now, cursor.RandomKey())), clock: clock}
}

// add creates a task and returns it.
func (e env) add(t *testing.T, tenant, args string) task {
	t.Helper()
	var out task
	e.OK(t, tenant, tasks.AddTool, args, &out)
	return out
}

// list returns one page.
func (e env) list(t *testing.T, tenant, args string) listResult {
	t.Helper()
	var out listResult
	e.OK(t, tenant, tasks.ListTool, args, &out)
	if out.Count != len(out.Tasks) {
		t.Fatalf("count %d, but %d tasks", out.Count, len(out.Tasks))
	}
	return out
}

// all pages through every task of tenant (filtered by status if not "")
// with pages of limit, and returns them.
func (e env) all(t *testing.T, tenant, status string, limit int) []task {
	t.Helper()
	var got []task
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
		args := map[string]any{"limit": limit}
		if status != "" {
			args["status"] = status
		}
		if cursor != "" {
			args["cursor"] = cursor
		}
		page := e.list(t, tenant, mustJSON(t, args))
		got = append(got, page.Tasks...)
		if page.NextCursor == nil {
			return got
		}
		if page.Count != limit {
			t.Fatalf("a page of %d before the last, want %d", page.Count, limit)
		}
		cursor = *page.NextCursor
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func ptr(s string) *string { return &s }

func str(p *string) string {
	if p == nil {
		return "<null>"
	}
	return fmt.Sprintf("%q", *p)
}

// ids returns the ids of tasks.
func ids(ts []task) []int64 {
	out := make([]int64, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

// TestTasks runs every task tool test on both storage backends.
func TestTasks(t *testing.T) {
	for _, be := range tooltest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			for _, tc := range taskTests {
				t.Run(tc.name, func(t *testing.T) { tc.run(t, be.NewStores(t)) })
			}
		})
	}
}

// taskTests take fresh stores, so any backend can run them.
var taskTests = []struct {
	name string
	run  func(t *testing.T, st store.Stores)
}{
	{"add", testAdd},
	{"add rejects", testAddRejects},
	{"update", testUpdate},
	{"update rejects", testUpdateRejects},
	{"update timestamps", testUpdateTimestamps},
	{"complete", testComplete},
	{"delete", testDelete},
	{"not found", testNotFound},
	{"task-API envelope", testTaskAPIEnvelope},
	{"hostile task ids", testHostileIDs},
	{"tenant isolation", testTenantIsolation},
	{"list order and filter", testListOrderAndFilter},
	{"list paging", testListPaging},
	{"list default limit", testListDefaultLimit},
	{"list rejects", testListRejects},
	{"concurrent adds", testConcurrentAdds},
}

func testAdd(t *testing.T, st store.Stores) {
	long := strings.Repeat("t", 255)
	longDesc := strings.Repeat("d", 1000)
	tests := []struct {
		name      string
		args      string
		wantTitle string
		wantDesc  *string
	}{
		{"title and description", `{"title":"Test task","description":"Test description"}`, "Test task", ptr("Test description")},
		{"title only", `{"title":"Buy milk"}`, "Buy milk", nil},
		{"both trimmed", `{"title":"  Test task \t","description":"\n Test description \r\n"}`, "Test task", ptr("Test description")},
		{"inner whitespace kept", `{"title":"a  b\tc"}`, "a  b\tc", nil},
		{"empty description is null", `{"title":"x","description":""}`, "x", nil},
		{"whitespace description is null", `{"title":"x","description":" \t\n "}`, "x", nil},
		{"null description", `{"title":"x","description":null}`, "x", nil},
		{"title of 255", `{"title":"` + long + `"}`, long, nil},
		{"description of 1000", `{"title":"x","description":"` + longDesc + `"}`, "x", ptr(longDesc)},
		{"unicode counts characters", `{"title":"` + strings.Repeat("日", 255) + `"}`, strings.Repeat("日", 255), nil},
		{"escaped unicode", `{"title":"Caf\u00e9 \u2615"}`, "Café ☕", nil},
		{"unicode whitespace trimmed", `{"title":"\u00a0 x \u3000"}`, "x", nil},
		{"title of 255 inside spaces (trimmed before counting)", `{"title":"\u3000 ` + long + ` \n"}`, long, nil},
		{"description of 1000 inside spaces", `{"title":"x","description":"  ` + longDesc + `\t"}`, "x", ptr(longDesc)},
		{"html is just text", `{"title":"<script>alert(1)</script>"}`, "<script>alert(1)</script>", nil},
	}
	e := newEnv(t, st)
	for i, tc := range tests {
		got := e.add(t, alice, tc.args)
		want := task{ID: int64(i + 1), Title: tc.wantTitle, Description: tc.wantDesc, Status: "pending",
			CreatedAt: tooltest.Reading(i), UpdatedAt: tooltest.Reading(i)}
		if got.ID != want.ID || got.Title != want.Title || str(got.Description) != str(want.Description) ||
			got.Status != want.Status || got.CreatedAt != want.CreatedAt || got.UpdatedAt != want.UpdatedAt || got.CompletedAt != nil {
			t.Errorf("%s: got %+v (description %s), want %+v (description %s)", tc.name, got, str(got.Description), want, str(want.Description))
		}
	}
	// The stored tasks read back the same.
	listed := e.list(t, alice, `{"limit":100}`)
	if listed.Count != len(tests) {
		t.Fatalf("listed %d tasks, want %d", listed.Count, len(tests))
	}
	for i, tc := range tests {
		if got := listed.Tasks[i]; got.Title != tc.wantTitle || str(got.Description) != str(tc.wantDesc) {
			t.Errorf("%s: stored %q %s, want %q %s", tc.name, got.Title, str(got.Description), tc.wantTitle, str(tc.wantDesc))
		}
	}
	o := e.OK(t, alice, tasks.AddTool, `{"title":"message"}`, nil)
	if o.Message != "Task created successfully" {
		t.Errorf("message %q", o.Message)
	}
}

func testAddRejects(t *testing.T, st store.Stores) {
	tests := []struct {
		name  string
		args  string
		field string // named in the error message
	}{
		{"no title", `{"description":"d"}`, "title"},
		{"empty title", `{"title":""}`, "title"},
		{"whitespace title", `{"title":" \t\n "}`, "title"},
		// Trimmed as Unicode whitespace before validation, so minLength
		// catches these.
		{"vertical tab title", `{"title":"\u000b"}`, "title"},
		{"unicode space title", `{"title":"\u00a0\u2003\u3000"}`, "title"},
		{"title of 256", `{"title":"` + strings.Repeat("t", 256) + `"}`, "title"},
		{"title of 256 characters", `{"title":"` + strings.Repeat("日", 256) + `"}`, "title"},
		{"title of 256 inside spaces", `{"title":"  ` + strings.Repeat("t", 256) + ` "}`, "title"},
		{"huge title", `{"title":"` + strings.Repeat("x", 60000) + `"}`, "title"},
		{"title number", `{"title":123}`, "title"},
		{"title null", `{"title":null}`, "title"},
		{"title object", `{"title":{"$ne":""}}`, "title"},
		{"title array", `{"title":["a"]}`, "title"},
		{"description of 1001", `{"title":"x","description":"` + strings.Repeat("d", 1001) + `"}`, "description"},
		{"description number", `{"title":"x","description":1}`, "description"},
		{"description array", `{"title":"x","description":["a"]}`, "description"},
		{"client id", `{"title":"x","id":7}`, "id"},
		{"client status", `{"title":"x","status":"completed"}`, "status"},
		{"client tenant", `{"title":"x","tenant":"bob"}`, "tenant"},
		{"case-folded field", `{"Title":"x"}`, "Title"},
		{"not an object", `["title"]`, "arguments"},
		{"not JSON", `{"title":`, "JSON"},
		{"trailing data", `{"title":"x"} {}`, "JSON"},
	}
	e := newEnv(t, st)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := e.Fail(t, alice, tasks.AddTool, tc.args, toolerr.InvalidInput)
			if !strings.Contains(err.Message, tc.field) {
				t.Errorf("message %q does not name %q", err.Message, tc.field)
			}
		})
	}
	if got := e.list(t, alice, `{}`); got.Count != 0 {
		t.Errorf("rejected adds stored %d task(s): %+v", got.Count, got.Tasks)
	}
	// No id was burnt either.
	if got := e.add(t, alice, `{"title":"first"}`); got.ID != 1 {
		t.Errorf("first stored task has id %d, want 1", got.ID)
	}
}

func testUpdate(t *testing.T, st store.Stores) {
	tests := []struct {
		name      string
		args      string // without task_id
		wantTitle string
		wantDesc  *string
	}{
		{"title only keeps description", `"title":"Renamed"`, "Renamed", ptr("Test description")},
		{"description only keeps title", `"description":"New"`, "Test task", ptr("New")},
		{"both", `"title":"Renamed","description":"New"`, "Renamed", ptr("New")},
		{"null clears description", `"description":null`, "Test task", nil},
		{"empty clears description", `"description":""`, "Test task", nil},
		{"whitespace clears description", `"description":"  \n"`, "Test task", nil},
		{"trimmed", `"title":"  Renamed  ","description":"\tNew\n"`, "Renamed", ptr("New")},
		{"title of 255", `"title":"` + strings.Repeat("t", 255) + `"`, strings.Repeat("t", 255), ptr("Test description")},
		{"description of 1000", `"description":"` + strings.Repeat("d", 1000) + `"`, "Test task", ptr(strings.Repeat("d", 1000))},
		{"same values", `"title":"Test task","description":"Test description"`, "Test task", ptr("Test description")},
	}
	e := newEnv(t, st)
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tenant := fmt.Sprintf("tenant-%d", i) // one task per case
			created := e.add(t, tenant, `{"title":"Test task","description":"Test description"}`)
			var got task
			o := e.OK(t, tenant, tasks.UpdateTool, fmt.Sprintf(`{"task_id":%d,%s}`, created.ID, tc.args), &got)
			if got.ID != created.ID || got.Title != tc.wantTitle || str(got.Description) != str(tc.wantDesc) || got.Status != "pending" {
				t.Errorf("got %+v (description %s), want title %q description %s", got, str(got.Description), tc.wantTitle, str(tc.wantDesc))
			}
			if o.Message != "Task updated successfully" {
				t.Errorf("message %q", o.Message)
			}
			stored := e.list(t, tenant, `{}`).Tasks[0]
			if stored.Title != tc.wantTitle || str(stored.Description) != str(tc.wantDesc) {
				t.Errorf("stored %q %s, want %q %s", stored.Title, str(stored.Description), tc.wantTitle, str(tc.wantDesc))
			}
		})
	}
}

func testUpdateRejects(t *testing.T, st store.Stores) {
	tests := []struct {
		name  string
		args  string
		field string
	}{
		{"nothing to change", `{"task_id":1}`, "give a title or a description"},
		{"no task_id", `{"title":"x"}`, "task_id"},
		{"empty title", `{"task_id":1,"title":""}`, "title"},
		{"whitespace title", `{"task_id":1,"title":"   "}`, "title"},
		{"vertical tab title", `{"task_id":1,"title":"\u000b\u000b"}`, "title"},
		{"unicode space title", `{"task_id":1,"title":"\u2028"}`, "title"},
		{"null title", `{"task_id":1,"title":null}`, "title"},
		{"title of 256", `{"task_id":1,"title":"` + strings.Repeat("t", 256) + `"}`, "title"},
		{"description of 1001", `{"task_id":1,"description":"` + strings.Repeat("d", 1001) + `"}`, "description"},
		{"status", `{"task_id":1,"title":"x","status":"completed"}`, "status"},
		{"completed_at", `{"task_id":1,"completed_at":null}`, "completed_at"},
		{"id", `{"task_id":1,"id":2,"title":"x"}`, "id"},
	}
	e := newEnv(t, st)
	before := e.add(t, alice, `{"title":"Test task","description":"Test description"}`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := e.Fail(t, alice, tasks.UpdateTool, tc.args, toolerr.InvalidInput)
			if !strings.Contains(err.Message, tc.field) {
				t.Errorf("message %q does not name %q", err.Message, tc.field)
			}
		})
	}
	after := e.list(t, alice, `{}`).Tasks
	if len(after) != 1 || mustJSON(t, after[0]) != mustJSON(t, before) {
		t.Errorf("rejected updates changed the task: before %+v, after %+v", before, after)
	}
}

func testUpdateTimestamps(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	created := e.add(t, alice, `{"title":"Test task"}`) // reading 0
	var updated task
	e.OK(t, alice, tasks.UpdateTool, `{"task_id":1,"title":"Renamed"}`, &updated) // reading 1
	if updated.CreatedAt != created.CreatedAt || updated.UpdatedAt != tooltest.Reading(1) || updated.CompletedAt != nil {
		t.Errorf("after update: %+v, want created_at %s, updated_at %s", updated, created.CreatedAt, tooltest.Reading(1))
	}
	var completed task
	e.OK(t, alice, tasks.CompleteTool, `{"task_id":1}`, &completed) // reading 2
	e.OK(t, alice, tasks.UpdateTool, `{"task_id":1,"description":"later"}`, &updated)
	if updated.Status != "completed" || updated.CompletedAt == nil || *updated.CompletedAt != tooltest.Reading(2) || updated.UpdatedAt != tooltest.Reading(3) {
		t.Errorf("updating a completed task: %+v, want completed at %s, updated at %s", updated, tooltest.Reading(2), tooltest.Reading(3))
	}
}

func testComplete(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	e.add(t, alice, `{"title":"first","description":"d"}`) // reading 0
	e.add(t, alice, `{"title":"second"}`)                  // reading 1
	var got task
	o := e.OK(t, alice, tasks.CompleteTool, `{"task_id":2}`, &got) // reading 2
	want := task{ID: 2, Title: "second", Status: "completed", CreatedAt: tooltest.Reading(1), UpdatedAt: tooltest.Reading(2), CompletedAt: ptr(tooltest.Reading(2))}
	if got.ID != want.ID || got.Title != want.Title || got.Description != nil || got.Status != want.Status ||
		got.CreatedAt != want.CreatedAt || got.UpdatedAt != want.UpdatedAt || str(got.CompletedAt) != str(want.CompletedAt) {
		t.Errorf("completed: got %+v, want %+v", got, want)
	}
	if o.Message != "Task completed successfully" {
		t.Errorf("message %q", o.Message)
	}
	// Completing again changes nothing: same completed_at and updated_at.
	var again task
	e.OK(t, alice, tasks.CompleteTool, `{"task_id":2}`, &again)
	if str(again.CompletedAt) != str(want.CompletedAt) || again.UpdatedAt != want.UpdatedAt || again.Status != "completed" {
		t.Errorf("completed twice: got %+v, want completed_at and updated_at %s", again, tooltest.Reading(2))
	}
	// Only task 2 changed.
	first := e.list(t, alice, `{}`).Tasks[0]
	if first.Status != "pending" || first.CompletedAt != nil {
		t.Errorf("task 1 changed: %+v", first)
	}
}

func testDelete(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	e.add(t, alice, `{"title":"first","description":"d"}`)
	e.add(t, alice, `{"title":"second"}`)
	e.OK(t, alice, tasks.CompleteTool, `{"task_id":1}`, nil)
	var got deleteResult
	o := e.OK(t, alice, tasks.DeleteTool, `{"task_id":1}`, &got)
	if !got.Deleted || got.TaskID != 1 || got.Task.ID != 1 || got.Task.Title != "first" || str(got.Task.Description) != `"d"` ||
		got.Task.Status != "completed" || got.Task.CompletedAt == nil {
		t.Errorf("deleted: %+v", got)
	}
	if o.Message != "Task deleted successfully" {
		t.Errorf("message %q", o.Message)
	}
	if got := ids(e.list(t, alice, `{}`).Tasks); fmt.Sprint(got) != "[2]" {
		t.Errorf("after delete, tasks %v, want [2]", got)
	}
	e.Fail(t, alice, tasks.DeleteTool, `{"task_id":1}`, toolerr.ResourceNotFound)
	// Ids are never reused.
	if got := e.add(t, alice, `{"title":"third"}`); got.ID != 3 {
		t.Errorf("next id after a delete is %d, want 3", got.ID)
	}
}

func testNotFound(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	e.add(t, alice, `{"title":"one"}`)
	e.add(t, alice, `{"title":"two"}`)
	e.OK(t, alice, tasks.DeleteTool, `{"task_id":2}`, nil)
	for _, id := range []int64{2, 3, 999, 9007199254740991} {
		for tool, args := range map[string]string{
			tasks.UpdateTool:   fmt.Sprintf(`{"task_id":%d,"title":"x"}`, id),
			tasks.CompleteTool: fmt.Sprintf(`{"task_id":%d}`, id),
			tasks.DeleteTool:   fmt.Sprintf(`{"task_id":%d}`, id),
		} {
			err := e.Fail(t, alice, tool, args, toolerr.ResourceNotFound)
			if want := fmt.Sprintf("Task %d not found", id); err.Message != want {
				t.Errorf("%s %d: message %q, want %q", tool, id, err.Message, want)
			}
			if got := fmt.Sprint(err.Details); got != fmt.Sprintf("map[task_id:%d]", id) {
				t.Errorf("%s %d: details %s, want task_id", tool, id, got)
			}
		}
	}
	// Nothing was created or changed by the failed calls.
	got := e.list(t, alice, `{}`).Tasks
	if len(got) != 1 || got[0].ID != 1 || got[0].Title != "one" || got[0].Status != "pending" {
		t.Errorf("tasks after not-found calls: %+v", got)
	}
}

// testTaskAPIEnvelope checks what POST /mcp/tool/{name} renders: the
// task-API envelope's shapes and code names.
func testTaskAPIEnvelope(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	o := e.Call(alice, tasks.AddTool, `{"title": "Test task", "description": "Test description"}`)
	b, _ := json.Marshal(envelope.ToTaskAPI(o))
	want := `{"success":true,"data":{"id":1,"title":"Test task","description":"Test description","status":"pending",` +
		`"created_at":"2025-01-15T10:00:00Z","updated_at":"2025-01-15T10:00:00Z","completed_at":null},"message":"Task created successfully"}`
	if string(b) != want {
		t.Errorf("success envelope\n got %s\nwant %s", b, want)
	}
	o = e.Call(alice, tasks.CompleteTool, `{"task_id": 42}`)
	b, _ = json.Marshal(envelope.ToTaskAPI(o))
	want = `{"success":false,"error":"Task 42 not found","code":"NOT_FOUND","details":{"task_id":42},"requestId":"test"}`
	if string(b) != want {
		t.Errorf("not-found envelope\n got %s\nwant %s", b, want)
	}
	o = e.Call(alice, tasks.AddTool, `{"title": " "}`)
	if env := envelope.ToTaskAPI(o); env.Success || env.Code != "VALIDATION_ERROR" {
		t.Errorf("invalid input envelope: %+v", env)
	}
}

func testHostileIDs(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	e.add(t, alice, `{"title":"one"}`)
	invalid := []string{`0`, `-1`, `-9223372036854775808`, `1e20`, `9007199254740992`, `9223372036854775807`,
		`18446744073709551617`, `1.5`, `1.0000000001`, `"1"`, `null`, `true`, `[1]`, `{"$gt":0}`, `""`}
	for _, id := range invalid {
		for tool, args := range map[string]string{
			tasks.UpdateTool:   `{"task_id":` + id + `,"title":"x"}`,
			tasks.CompleteTool: `{"task_id":` + id + `}`,
			tasks.DeleteTool:   `{"task_id":` + id + `}`,
		} {
			err := e.Fail(t, alice, tool, args, toolerr.InvalidInput)
			if !strings.Contains(err.Message, "task_id") {
				t.Errorf("%s %s: message %q does not name task_id", tool, id, err.Message)
			}
		}
	}
	// The schema takes this for the integer 1; the tool refuses numbers
	// this long (exact arithmetic on them is costly) as invalid input.
	long := `1.` + strings.Repeat("0", 200)
	e.Fail(t, alice, tasks.CompleteTool, `{"task_id":`+long+`}`, toolerr.InvalidInput)
	e.Fail(t, alice, tasks.ListTool, `{"limit":`+long+`}`, toolerr.InvalidInput)
	// JSON Schema counts 1.0 and 1e0 as the integer 1.
	for _, id := range []string{`1.0`, `1e0`, `0.1e1`} {
		var got task
		e.OK(t, alice, tasks.UpdateTool, `{"task_id":`+id+`,"description":"via `+id+`"}`, &got)
		if got.ID != 1 || str(got.Description) != `"via `+id+`"` {
			t.Errorf("task_id %s: got %+v", id, got)
		}
	}
	if got := e.list(t, alice, `{}`).Tasks; len(got) != 1 || got[0].Title != "one" || got[0].Status != "pending" {
		t.Errorf("hostile ids changed tasks: %+v", got)
	}
}

func testTenantIsolation(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	e.add(t, alice, `{"title":"alice 1","description":"private"}`)
	e.add(t, alice, `{"title":"alice 2"}`)
	if got := e.list(t, bob, `{}`); got.Count != 0 || got.NextCursor != nil {
		t.Errorf("bob sees %+v", got)
	}
	e.Fail(t, bob, tasks.UpdateTool, `{"task_id":1,"title":"bob was here"}`, toolerr.ResourceNotFound)
	e.Fail(t, bob, tasks.UpdateTool, `{"task_id":2,"description":null}`, toolerr.ResourceNotFound)
	e.Fail(t, bob, tasks.CompleteTool, `{"task_id":1}`, toolerr.ResourceNotFound)
	e.Fail(t, bob, tasks.DeleteTool, `{"task_id":2}`, toolerr.ResourceNotFound)
	// Bob's ids start at 1 on his own counter.
	if got := e.add(t, bob, `{"title":"bob 1"}`); got.ID != 1 {
		t.Errorf("bob's first task has id %d", got.ID)
	}
	// Alice's cursor was issued for her calls, not bob's.
	page := e.list(t, alice, `{"limit":1}`)
	e.Fail(t, bob, tasks.ListTool, `{"cursor":"`+*page.NextCursor+`"}`, toolerr.InvalidInput)
	got := e.list(t, alice, `{}`).Tasks
	if len(got) != 2 || got[0].Title != "alice 1" || str(got[0].Description) != `"private"` || got[0].Status != "pending" ||
		got[1].Title != "alice 2" {
		t.Errorf("alice's tasks after bob's attempts: %+v", got)
	}
	if got := e.list(t, bob, `{}`).Tasks; len(got) != 1 || got[0].Title != "bob 1" {
		t.Errorf("bob's tasks: %+v", got)
	}
}

func testListOrderAndFilter(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	empty := e.list(t, alice, `{}`)
	if empty.Count != 0 || empty.Tasks == nil || empty.NextCursor != nil {
		t.Errorf("fresh list: %+v", empty)
	}
	for i := 1; i <= 6; i++ {
		e.add(t, alice, fmt.Sprintf(`{"title":"task %d"}`, i))
	}
	for _, id := range []int{5, 2, 3} {
		e.OK(t, alice, tasks.CompleteTool, fmt.Sprintf(`{"task_id":%d}`, id), nil)
	}
	e.OK(t, alice, tasks.DeleteTool, `{"task_id":3}`, nil)
	for _, tc := range []struct{ args, want string }{
		{`{}`, "[1 2 4 5 6]"},
		{`{"status":"pending"}`, "[1 4 6]"},
		{`{"status":"completed"}`, "[2 5]"},
	} {
		page := e.list(t, alice, tc.args)
		if got := fmt.Sprint(ids(page.Tasks)); got != tc.want || page.NextCursor != nil {
			t.Errorf("list %s: ids %s next %s, want %s and no next", tc.args, got, str(page.NextCursor), tc.want)
		}
		for _, task := range page.Tasks {
			if (task.Status == "completed") != (task.CompletedAt != nil) {
				t.Errorf("task %+v: status and completed_at disagree", task)
			}
		}
	}
	o := e.OK(t, alice, tasks.ListTool, `{"status":"completed"}`, nil)
	if o.Message != "Found 2 task(s)" {
		t.Errorf("message %q", o.Message)
	}
}

func testListPaging(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	for i := 1; i <= 11; i++ {
		e.add(t, alice, fmt.Sprintf(`{"title":"task %d"}`, i))
		if i%3 == 0 {
			e.OK(t, alice, tasks.CompleteTool, fmt.Sprintf(`{"task_id":%d}`, i), nil)
		}
	}
	for _, tc := range []struct {
		status string
		limit  int
		want   string
	}{
		{"", 1, "[1 2 3 4 5 6 7 8 9 10 11]"},
		{"", 2, "[1 2 3 4 5 6 7 8 9 10 11]"},
		{"", 11, "[1 2 3 4 5 6 7 8 9 10 11]"},
		{"", 100, "[1 2 3 4 5 6 7 8 9 10 11]"},
		{"pending", 2, "[1 2 4 5 7 8 10 11]"},
		{"completed", 2, "[3 6 9]"},
		{"completed", 3, "[3 6 9]"},
	} {
		if got := fmt.Sprint(ids(e.all(t, alice, tc.status, tc.limit))); got != tc.want {
			t.Errorf("status %q limit %d: %s, want %s", tc.status, tc.limit, got, tc.want)
		}
	}
	// An exact last page has no next cursor.
	page := e.list(t, alice, `{"limit":11}`)
	if page.Count != 11 || page.NextCursor != nil {
		t.Errorf("limit 11 of 11: count %d next %s", page.Count, str(page.NextCursor))
	}
	// A cursor stays valid when its task is deleted.
	page = e.list(t, alice, `{"limit":4}`)
	e.OK(t, alice, tasks.DeleteTool, `{"task_id":4}`, nil)
	rest := e.list(t, alice, `{"limit":100,"cursor":"`+*page.NextCursor+`"}`)
	if got := fmt.Sprint(ids(rest.Tasks)); got != "[5 6 7 8 9 10 11]" {
		t.Errorf("after a deleted cursor task: %s", got)
	}
	// limit is an integer as JSON Schema counts them.
	if got := e.list(t, alice, `{"limit":2.0}`); got.Count != 2 {
		t.Errorf("limit 2.0: count %d", got.Count)
	}
}

func testListDefaultLimit(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	for i := 1; i <= 51; i++ {
		e.add(t, alice, fmt.Sprintf(`{"title":"task %d"}`, i))
	}
	page := e.list(t, alice, `{}`)
	if page.Count != 50 || page.NextCursor == nil || page.Tasks[49].ID != 50 {
		t.Fatalf("default page: count %d next %s", page.Count, str(page.NextCursor))
	}
	rest := e.list(t, alice, `{"cursor":"`+*page.NextCursor+`"}`)
	if got := fmt.Sprint(ids(rest.Tasks)); got != "[51]" || rest.NextCursor != nil {
		t.Errorf("second page: %s next %s", got, str(rest.NextCursor))
	}
}

func testListRejects(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	e.add(t, alice, `{"title":"one"}`)
	e.add(t, alice, `{"title":"two"}`)
	valid := *e.list(t, alice, `{"limit":1}`).NextCursor
	tests := []struct {
		name, args, field string
	}{
		{"unknown status", `{"status":"done"}`, "status"},
		{"status case", `{"status":"PENDING"}`, "status"},
		{"status null", `{"status":null}`, "status"},
		{"limit 0", `{"limit":0}`, "limit"},
		{"limit -1", `{"limit":-1}`, "limit"},
		{"limit 101", `{"limit":101}`, "limit"},
		{"limit huge", `{"limit":1e300}`, "limit"},
		{"limit fraction", `{"limit":1.5}`, "limit"},
		{"limit string", `{"limit":"10"}`, "limit"},
		{"empty cursor", `{"cursor":""}`, "cursor"},
		{"cursor number", `{"cursor":5}`, "cursor"},
		{"cursor too long", `{"cursor":"` + strings.Repeat("A", 513) + `"}`, "cursor"},
		{"not a cursor", `{"cursor":"not-a-cursor"}`, "cursor"},
		{"cursor with padding", `{"cursor":"` + valid + `="}`, "cursor"},
		{"cursor in std base64", `{"cursor":"dDox+/"}`, "cursor"},
		{"cursor id 1, made up", `{"cursor":"` + unkeyed("t:1") + `"}`, "cursor"},
		{"cursor id MaxInt64, made up", `{"cursor":"` + unkeyed("t:9223372036854775807") + `"}`, "cursor"},
		{"cursor id overflow, made up", `{"cursor":"` + unkeyed("t:9223372036854775808") + `"}`, "cursor"},
		{"cursor without kind", `{"cursor":"MQ"}`, "cursor"},
		{"memory cursor, made up", `{"cursor":"` + unkeyed("m:0000000000000000001-0000000000000000") + `"}`, "cursor"},
		{"another call's cursor", `{"status":"pending","cursor":"` + valid + `"}`, "cursor"},
		{"unknown field", `{"offset":10}`, "offset"},
		{"tenant field", `{"tenant":"bob"}`, "tenant"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := e.Fail(t, alice, tasks.ListTool, tc.args, toolerr.InvalidInput)
			if !strings.Contains(err.Message, tc.field) {
				t.Errorf("message %q does not name %q", err.Message, tc.field)
			}
		})
	}
	// Another tenant's cursor is not one issued for bob's call.
	e.Fail(t, bob, tasks.ListTool, `{"cursor":"`+valid+`"}`, toolerr.InvalidInput)
	// A client may change the page size.
	if got := e.list(t, alice, `{"limit":100,"cursor":"`+valid+`"}`); fmt.Sprint(ids(got.Tasks)) != "[2]" {
		t.Errorf("with another limit: %v", ids(got.Tasks))
	}
}

// unkeyed is a cursor as list_tasks and read_memory made them before they
// were keyed: the base64url of "kind:position", which anyone could make.
func unkeyed(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func testConcurrentAdds(t *testing.T, st store.Stores) {
	const n = 200
	e := newEnv(t, st)
	got := make([]int64, n)
	var wg sync.WaitGroup
	// 16 at a time race for the ids as much as 200 do, and dynalite on a
	// busy machine still answers each within the calls' stall bound.
	sem := make(chan struct{}, 16)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			o := e.Call(alice, tasks.AddTool, fmt.Sprintf(`{"title":"task %d"}`, i))
			if !o.OK {
				t.Errorf("add %d: %+v", i, o.Error)
				return
			}
			var tk task
			if err := json.Unmarshal(o.Result, &tk); err != nil {
				t.Errorf("add %d: %v", i, err)
			}
			got[i] = tk.ID
		})
	}
	wg.Wait()
	seen := make(map[int64]bool, n)
	for _, id := range got {
		if id < 1 || id > n || seen[id] {
			t.Errorf("id %d is out of 1..%d or issued twice", id, n)
		}
		seen[id] = true
	}
	listed := e.all(t, alice, "", 100)
	if len(listed) != n {
		t.Fatalf("listed %d tasks, want %d", len(listed), n)
	}
	for i, tk := range listed {
		if tk.ID != int64(i+1) {
			t.Fatalf("listed task %d has id %d: not ascending 1..%d", i, tk.ID, n)
		}
	}
}
