package memory_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/memoryfile"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/memory"
)

// Tenants of the tests.
const (
	alice = "alice"
	bob   = "bob"
)

const (
	progress  = "progress_log.jsonl"
	decisions = "decisions.jsonl"
	practices = "best_practices.md"
)

type writeResult struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	File    string `json:"file"`
	ID      string `json:"id"`
	Bytes   int    `json:"bytes"`
}

type entry struct {
	ID        string `json:"id"`
	CreatedAt string `json:"created_at"`
	Content   string `json:"content"`
}

type readResult struct {
	File       string  `json:"file"`
	Entries    []entry `json:"entries"`
	NextCursor *string `json:"next_cursor"`
}

// env is the memory tools over fresh stores, behind the real pipeline,
// with a clock that ticks one second per reading.
type env struct {
	*tooltest.Harness
	mem store.Memory
}

func newEnv(t *testing.T, st store.Stores) env {
	clock := tooltest.NewClock()
	return env{Harness: tooltest.New(t, st, memory.Tools(st.Memory, clock.Now, cursor.RandomKey())), mem: st.Memory}
}

// write appends an entry and returns the result.
func (e env) write(t *testing.T, tenant, args string) writeResult {
	t.Helper()
	var out writeResult
	e.OK(t, tenant, memory.WriteTool, args, &out)
	return out
}

// read returns one page.
func (e env) read(t *testing.T, tenant, args string) readResult {
	t.Helper()
	var out readResult
	e.OK(t, tenant, memory.ReadTool, args, &out)
	return out
}

// contents returns every entry's content of a file, paging with limit.
func (e env) contents(t *testing.T, tenant, file string, limit int) []string {
	t.Helper()
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
		args := fmt.Sprintf(`{"file":%q,"limit":%d}`, file, limit)
		if cursor != "" {
			args = fmt.Sprintf(`{"file":%q,"limit":%d,"cursor":%q}`, file, limit, cursor)
		}
		page := e.read(t, tenant, args)
		for _, en := range page.Entries {
			got = append(got, en.Content)
		}
		if page.NextCursor == nil {
			return got
		}
		if len(page.Entries) != limit {
			t.Fatalf("a page of %d before the last, want %d", len(page.Entries), limit)
		}
		cursor = *page.NextCursor
	}
}

// empty fails the test if tenant has entries in any memory file.
func (e env) empty(t *testing.T, tenant string) {
	t.Helper()
	for _, f := range memoryfile.Names() {
		if got := e.contents(t, tenant, f, 100); len(got) != 0 {
			t.Errorf("%s has %d entries in %s: %q", tenant, len(got), f, got)
		}
	}
}

// TestMemory runs every memory tool test on both storage backends.
func TestMemory(t *testing.T) {
	for _, be := range tooltest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			for _, tc := range memoryTests {
				t.Run(tc.name, func(t *testing.T) { tc.run(t, be.NewStores(t)) })
			}
		})
	}
}

// memoryTests take fresh stores, so any backend can run them.
var memoryTests = []struct {
	name string
	run  func(t *testing.T, st store.Stores)
}{
	{"write jsonl", testWriteJSONL},
	{"write markdown", testWriteMarkdown},
	{"write rejects", testWriteRejects},
	{"size limit", testSizeLimit},
	{"read paging", testReadPaging},
	{"read rejects", testReadRejects},
	{"tenant isolation", testTenantIsolation},
	{"render", testRender},
}

func testWriteJSONL(t *testing.T, st store.Stores) {
	tests := []struct {
		name, file, entry, want string
	}{
		{"progress entry", progress, `{"timestamp":"2025-01-15T10:00:00Z","event":"session_start"}`,
			`{"timestamp":"2025-01-15T10:00:00Z","event":"session_start"}`},
		{"whitespace and newlines compacted, field order kept", decisions,
			"{\n  \"why\": \"on-demand\",\n  \"timestamp\": \"2025-01-15T10:30:00+01:00\",\n  \"event\": \"decision\"\n}",
			`{"why":"on-demand","timestamp":"2025-01-15T10:30:00+01:00","event":"decision"}`},
		{"escaped newlines stay escaped", progress, `{"timestamp":"2025-01-15T10:00:00.5Z","notes":"line 1\nline 2\r\n"}`,
			`{"timestamp":"2025-01-15T10:00:00.5Z","notes":"line 1\nline 2\r\n"}`},
		{"nested values and exact numbers", decisions,
			`{"timestamp":"2025-01-15T10:00:00Z","n":12345678901234567890,"f":1.50,"tags":["a", "b"],"meta":{"x":null}}`,
			`{"timestamp":"2025-01-15T10:00:00Z","n":12345678901234567890,"f":1.50,"tags":["a","b"],"meta":{"x":null}}`},
		{"lower-case t and z (RFC 3339 §5.6)", progress, `{"timestamp":"2025-01-15t10:00:00z"}`, `{"timestamp":"2025-01-15t10:00:00z"}`},
		{"leap second", progress, `{"timestamp":"2016-12-31T23:59:60Z"}`, `{"timestamp":"2016-12-31T23:59:60Z"}`},
		{"html kept as written", progress, `{"timestamp":"2025-01-15T10:00:00Z","event":"<b>&</b>"}`,
			`{"timestamp":"2025-01-15T10:00:00Z","event":"<b>&</b>"}`},
	}
	e := newEnv(t, st)
	for i, tc := range tests {
		got := e.write(t, alice, fmt.Sprintf(`{"file":%q,"entry":%s}`, tc.file, tc.entry))
		if !got.Success || got.File != tc.file || got.ID == "" || got.Bytes != len(tc.want) ||
			got.Message != fmt.Sprintf("Appended %d bytes to %s", len(tc.want), tc.file) {
			t.Errorf("%s: result %+v, want %d bytes", tc.name, got, len(tc.want))
		}
		page := e.read(t, alice, fmt.Sprintf(`{"file":%q,"limit":100}`, tc.file))
		last := page.Entries[len(page.Entries)-1]
		if last.Content != tc.want || last.ID != got.ID || last.CreatedAt != tooltest.Reading(i) {
			t.Errorf("%s: stored %+v, want content %s created at %s", tc.name, last, tc.want, tooltest.Reading(i))
		}
		if strings.Contains(last.Content, "\n") || !json.Valid([]byte(last.Content)) {
			t.Errorf("%s: stored content is not one JSON line: %q", tc.name, last.Content)
		}
	}
}

func testWriteMarkdown(t *testing.T, st store.Stores) {
	tests := []struct{ content, want string }{
		{"- Keep mains thin.\n", "- Keep mains thin.\n"},
		{"- No newline", "- No newline\n"},
		{"- Trailing blank lines\n\n\n  \t\n", "- Trailing blank lines\n"},
		{"    indented code\n\nsecond paragraph", "    indented code\n\nsecond paragraph\n"},
		{"Unicode ✓ 日本語", "Unicode ✓ 日本語\n"},
	}
	e := newEnv(t, st)
	for _, tc := range tests {
		got := e.write(t, alice, fmt.Sprintf(`{"file":%q,"content":%q}`, practices, tc.content))
		if got.Bytes != len(tc.want) {
			t.Errorf("content %q: %d bytes, want %d", tc.content, got.Bytes, len(tc.want))
		}
	}
	got := e.contents(t, alice, practices, 100)
	for i, tc := range tests {
		if i >= len(got) || got[i] != tc.want {
			t.Errorf("entry %d: stored %q, want %q", i, got, tc.want)
		}
	}
	// Other files are untouched.
	if got := e.contents(t, alice, progress, 100); len(got) != 0 {
		t.Errorf("%s has %q", progress, got)
	}
}

func testWriteRejects(t *testing.T, st store.Stores) {
	ts := `"timestamp":"2025-01-15T10:00:00Z"`
	tests := []struct {
		name, args, field string
	}{
		{"no file", `{"entry":{` + ts + `}}`, "file"},
		{"unknown file", `{"file":"CLAUDE.md","content":"overwrite me"}`, "file"},
		{"path traversal", `{"file":"../../.env","content":"SECRET=1"}`, "file"},
		{"path prefix", `{"file":".claude/memory/best_practices.md","content":"x"}`, "file"},
		{"file case", `{"file":"BEST_PRACTICES.md","content":"x"}`, "file"},
		{"file with NUL", `{"file":"decisions.jsonl\u0000","entry":{` + ts + `}}`, "file"},
		{"empty file", `{"file":"","content":"x"}`, "file"},
		{"file number", `{"file":1,"content":"x"}`, "file"},
		{"jsonl without entry", `{"file":"decisions.jsonl"}`, "entry"},
		{"jsonl with content", `{"file":"decisions.jsonl","content":"We chose Go."}`, "content"},
		{"jsonl with both", `{"file":"decisions.jsonl","entry":{` + ts + `},"content":"x"}`, "content"},
		{"entry without timestamp", `{"file":"progress_log.jsonl","entry":{"event":"session_start"}}`, "timestamp"},
		{"empty entry", `{"file":"progress_log.jsonl","entry":{}}`, "timestamp"},
		{"timestamp not RFC 3339", `{"file":"progress_log.jsonl","entry":{"timestamp":"yesterday"}}`, "timestamp"},
		{"timestamp date only", `{"file":"progress_log.jsonl","entry":{"timestamp":"2025-01-15"}}`, "timestamp"},
		{"timestamp with a space", `{"file":"progress_log.jsonl","entry":{"timestamp":"2025-01-15 10:00:00Z"}}`, "timestamp"},
		{"timestamp without zone", `{"file":"progress_log.jsonl","entry":{"timestamp":"2025-01-15T10:00:00"}}`, "timestamp"},
		{"timestamp February 30", `{"file":"progress_log.jsonl","entry":{"timestamp":"2025-02-30T10:00:00Z"}}`, "timestamp"},
		// RFC 3339 allows a lower-case "t" and "z" and a leap second, but
		// only at 23:59:60 UTC and never another letter.
		{"timestamp leap second at the wrong time", `{"file":"progress_log.jsonl","entry":{"timestamp":"2016-12-31T23:59:61Z"}}`, "entry.timestamp"},
		{"timestamp lowercase other letter", `{"file":"progress_log.jsonl","entry":{"timestamp":"2025-01-15x10:00:00z"}}`, "entry.timestamp"},
		{"duplicate timestamp key", `{"file":"progress_log.jsonl","entry":{"timestamp":"2025-01-15T10:00:00Z","timestamp":"x"}}`, "duplicate key \"timestamp\" in entry"},
		{"timestamp number", `{"file":"progress_log.jsonl","entry":{"timestamp":1736935200}}`, "timestamp"},
		{"timestamp null", `{"file":"progress_log.jsonl","entry":{"timestamp":null}}`, "timestamp"},
		{"timestamp object", `{"file":"progress_log.jsonl","entry":{"timestamp":{"$date":1}}}`, "timestamp"},
		{"entry string", `{"file":"progress_log.jsonl","entry":"{\"timestamp\":\"2025-01-15T10:00:00Z\"}"}`, "entry"},
		{"entry array", `{"file":"progress_log.jsonl","entry":[{` + ts + `}]}`, "entry"},
		{"entry null", `{"file":"progress_log.jsonl","entry":null}`, "entry"},
		{"event not a string", `{"file":"progress_log.jsonl","entry":{` + ts + `,"event":5}}`, "event"},
		{"entry invalid UTF-8", "{\"file\":\"progress_log.jsonl\",\"entry\":{" + ts + ",\"x\":\"\xff\xfe\"}}", "UTF-8"},
		{"markdown without content", `{"file":"best_practices.md"}`, "content"},
		{"markdown with entry", `{"file":"best_practices.md","entry":{` + ts + `}}`, "content"},
		{"markdown with both", `{"file":"best_practices.md","content":"x","entry":{` + ts + `}}`, "entry"},
		{"empty content", `{"file":"best_practices.md","content":""}`, "content"},
		{"whitespace content", `{"file":"best_practices.md","content":" \n\t "}`, "content"},
		// The schema's \S is ASCII-only; the tool's check catches these.
		{"vertical tab content", `{"file":"best_practices.md","content":"\u000b\n"}`, "content"},
		{"unicode space content", `{"file":"best_practices.md","content":"\u00a0\u3000"}`, "content"},
		{"content null", `{"file":"best_practices.md","content":null}`, "content"},
		{"content of 5001", `{"file":"best_practices.md","content":"` + strings.Repeat("a", 5001) + `"}`, "content"},
		{"unknown field", `{"file":"best_practices.md","content":"x","mode":"overwrite"}`, "mode"},
		{"offset field", `{"file":"best_practices.md","content":"x","offset":0}`, "offset"},
		{"not an object", `"best_practices.md"`, "arguments"},
	}
	e := newEnv(t, st)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := e.Fail(t, alice, memory.WriteTool, tc.args, toolerr.InvalidInput)
			if !strings.Contains(err.Message, tc.field) {
				t.Errorf("message %q does not name %q", err.Message, tc.field)
			}
		})
	}
	e.empty(t, alice)
}

func testSizeLimit(t *testing.T, st store.Stores) {
	ts := `{"timestamp":"2025-01-15T10:00:00Z","notes":"`
	// jsonl: the stored line is ts + notes + `"}`.
	notes := func(lineBytes int) string { return strings.Repeat("x", lineBytes-len(ts)-2) }
	tests := []struct {
		name, args string
		bytes      int // the entry's size as the limit counts it; over 5120 is refused
		stored     int // bytes appended to the file when accepted
	}{
		{"jsonl at the limit", `{"file":"progress_log.jsonl","entry":` + ts + notes(5120) + `"}}`, 5120, 5120},
		{"jsonl one byte over", `{"file":"progress_log.jsonl","entry":` + ts + notes(5121) + `"}}`, 5121, 0},
		{"jsonl far over", `{"file":"decisions.jsonl","entry":` + ts + notes(60000) + `"}}`, 60000, 0},
		{"jsonl whitespace does not count", `{"file":"progress_log.jsonl","entry":` + strings.Replace(ts, ",", ",                ", 1) + notes(5120) + `"}}`, 5120, 5120},
		{"jsonl escapes count as written", `{"file":"progress_log.jsonl","entry":` + ts + strings.Repeat(`\u00e9`, 900) + `"}}`, len(ts) + 6*900 + 2, len(ts) + 6*900 + 2},
		// 2560 two-byte characters: exactly 5120 bytes; the newline that
		// ends the entry in the file is not the caller's.
		{"markdown of exactly 5120 bytes", `{"file":"best_practices.md","content":"` + strings.Repeat("é", 2560) + `"}`, 5120, 5121},
		{"markdown one byte over", `{"file":"best_practices.md","content":"` + strings.Repeat("é", 2560) + `a"}`, 5121, 0},
		{"markdown 5000 characters, 10000 bytes", `{"file":"best_practices.md","content":"` + strings.Repeat("é", 5000) + `"}`, 10000, 0},
		{"markdown 5000 characters of 4 bytes", `{"file":"best_practices.md","content":"` + strings.Repeat("😀", 5000) + `"}`, 20000, 0},
		{"markdown trailing space does not count", `{"file":"best_practices.md","content":"` + strings.Repeat("é", 2560) + `    \n\n"}`, 5120, 5121},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, st)
			tenant := strings.ReplaceAll(tc.name, " ", "-")
			tenant = strings.ReplaceAll(tenant, ",", "")
			if tc.bytes <= memory.MaxEntryBytes {
				if got := e.write(t, tenant, tc.args); got.Bytes != tc.stored {
					t.Errorf("stored %d bytes, want %d", got.Bytes, tc.stored)
				}
				return
			}
			err := e.Fail(t, tenant, memory.WriteTool, tc.args, toolerr.SizeLimitExceeded)
			if got, want := fmt.Sprint(err.Details), fmt.Sprintf("map[bytes:%d limitBytes:5120]", tc.bytes); got != want {
				t.Errorf("details %s, want %s", got, want)
			}
			e.empty(t, tenant)
		})
	}
}

func testReadPaging(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	empty := e.read(t, alice, `{"file":"decisions.jsonl"}`)
	if empty.File != decisions || empty.Entries == nil || len(empty.Entries) != 0 || empty.NextCursor != nil {
		t.Errorf("fresh read: %+v", empty)
	}
	var want []string
	for i := range 7 {
		line := fmt.Sprintf(`{"timestamp":"2025-01-15T10:00:0%dZ","n":%d}`, i, i)
		e.write(t, alice, `{"file":"decisions.jsonl","entry":`+line+`}`)
		want = append(want, line)
		e.write(t, alice, fmt.Sprintf(`{"file":"progress_log.jsonl","entry":{"timestamp":"2025-01-15T10:00:00Z","other":%d}}`, i))
	}
	for _, limit := range []int{1, 2, 3, 7, 100} {
		if got := e.contents(t, alice, decisions, limit); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("limit %d: %q, want %q", limit, got, want)
		}
	}
	page := e.read(t, alice, `{"file":"decisions.jsonl","limit":7}`)
	if page.NextCursor != nil {
		t.Errorf("an exact last page has next_cursor %s", *page.NextCursor)
	}
	for i, en := range page.Entries {
		if en.CreatedAt != tooltest.Reading(2*i) || (i > 0 && en.ID <= page.Entries[i-1].ID) {
			t.Errorf("entry %d: %+v, want created at %s and ids ascending", i, en, tooltest.Reading(2*i))
		}
	}
	// Defaults to 20 a page.
	for i := 7; i < 21; i++ {
		e.write(t, alice, fmt.Sprintf(`{"file":"decisions.jsonl","entry":{"timestamp":"2025-01-15T10:00:00Z","n":%d}}`, i))
	}
	page = e.read(t, alice, `{"file":"decisions.jsonl"}`)
	if len(page.Entries) != 20 || page.NextCursor == nil {
		t.Fatalf("default page: %d entries, next %v", len(page.Entries), page.NextCursor)
	}
	rest := e.read(t, alice, `{"file":"decisions.jsonl","cursor":"`+*page.NextCursor+`"}`)
	if len(rest.Entries) != 1 || rest.NextCursor != nil {
		t.Errorf("second page: %+v", rest)
	}
	o := e.OK(t, alice, memory.ReadTool, `{"file":"decisions.jsonl","limit":1.0}`, nil)
	if o.Message != "Found 1 entry in decisions.jsonl" {
		t.Errorf("message %q", o.Message)
	}
}

func testReadRejects(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	for range 2 {
		e.write(t, alice, `{"file":"decisions.jsonl","entry":{"timestamp":"2025-01-15T10:00:00Z"}}`)
	}
	valid := *e.read(t, alice, `{"file":"decisions.jsonl","limit":1}`).NextCursor
	tests := []struct {
		name, args, field string
	}{
		{"no file", `{}`, "file"},
		{"unknown file", `{"file":"../../etc/passwd"}`, "file"},
		{"limit 0", `{"file":"decisions.jsonl","limit":0}`, "limit"},
		{"limit 101", `{"file":"decisions.jsonl","limit":101}`, "limit"},
		{"limit string", `{"file":"decisions.jsonl","limit":"20"}`, "limit"},
		{"empty cursor", `{"file":"decisions.jsonl","cursor":""}`, "cursor"},
		{"not a cursor", `{"file":"decisions.jsonl","cursor":"not-a-cursor"}`, "cursor"},
		{"padded cursor", `{"file":"decisions.jsonl","cursor":"` + valid + `="}`, "cursor"},
		{"task cursor", `{"file":"decisions.jsonl","cursor":"dDox"}`, "cursor"},
		{"cursor with a made-up id", `{"file":"decisions.jsonl","cursor":"` + unkeyed("m:abc") + `"}`, "cursor"},
		{"cursor with an id never handed out", `{"file":"decisions.jsonl","cursor":"` + unkeyed("m:0000000000000000000-0000000000000000") + `"}`, "cursor"},
		{"another file's cursor", `{"file":"progress_log.jsonl","cursor":"` + valid + `"}`, "cursor"},
		{"unknown field", `{"file":"decisions.jsonl","offset":10}`, "offset"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := e.Fail(t, alice, memory.ReadTool, tc.args, toolerr.InvalidInput)
			if !strings.Contains(err.Message, tc.field) {
				t.Errorf("message %q does not name %q", err.Message, tc.field)
			}
		})
	}
	// A client may change the page size.
	if got := e.read(t, alice, `{"file":"decisions.jsonl","limit":100,"cursor":"`+valid+`"}`); len(got.Entries) != 1 {
		t.Errorf("with another limit: %d entries, want 1", len(got.Entries))
	}
}

// unkeyed is a cursor as read_memory made them before they were keyed:
// the base64url of "kind:position", which anyone could make.
func unkeyed(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func testTenantIsolation(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	e.write(t, alice, `{"file":"decisions.jsonl","entry":{"timestamp":"2025-01-15T10:00:00Z","secret":"alice only"}}`)
	e.write(t, alice, `{"file":"best_practices.md","content":"alice's practice"}`)
	e.empty(t, bob)
	// Alice's cursor was issued for her calls, not bob's.
	e.write(t, alice, `{"file":"decisions.jsonl","entry":{"timestamp":"2025-01-15T10:00:00Z"}}`)
	page := e.read(t, alice, `{"file":"decisions.jsonl","limit":1}`)
	e.Fail(t, bob, memory.ReadTool, `{"file":"decisions.jsonl","cursor":"`+*page.NextCursor+`"}`, toolerr.InvalidInput)
	for _, f := range memoryfile.Names() {
		text, err := memoryfile.Render(context.Background(), e.mem, bob, f, 1<<20)
		if err != nil || text != "" {
			t.Errorf("Render(bob, %s) = %q, %v", f, text, err)
		}
	}
	e.write(t, bob, `{"file":"decisions.jsonl","entry":{"timestamp":"2025-01-15T10:00:00Z","by":"bob"}}`)
	if got := e.contents(t, alice, decisions, 100); len(got) != 2 || strings.Contains(strings.Join(got, ""), "bob") {
		t.Errorf("alice's decisions: %q", got)
	}
}

// smallPages makes a store return at most two entries a page, so Render
// has to page.
type smallPages struct{ store.Memory }

func (s smallPages) List(ctx context.Context, tenant, file string, q store.MemoryQuery) (store.MemoryPage, error) {
	q.Limit = min(q.Limit, 2)
	return s.Memory.List(ctx, tenant, file, q)
}

func testRender(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	ctx := context.Background()
	for _, f := range memoryfile.Names() {
		if text, err := memoryfile.Render(ctx, e.mem, alice, f, 1<<20); err != nil || text != "" {
			t.Errorf("empty %s renders as %q, %v", f, text, err)
		}
	}
	var lines []string
	for i := range 5 {
		line := fmt.Sprintf(`{"timestamp":"2025-01-15T10:00:00Z","n":%d}`, i)
		e.write(t, alice, `{"file":"progress_log.jsonl","entry":`+line+`}`)
		lines = append(lines, line+"\n")
	}
	for _, c := range []string{"# One\n\ntext", "- two\n\n", "three"} {
		e.write(t, alice, fmt.Sprintf(`{"file":"best_practices.md","content":%q}`, c))
	}
	for _, mem := range []store.Memory{e.mem, smallPages{e.mem}} {
		got, err := memoryfile.Render(ctx, mem, alice, progress, 1<<20)
		if want := strings.Join(lines, ""); err != nil || got != want {
			t.Errorf("%T: jsonl renders as %q, %v; want %q", mem, got, err, want)
		}
		got, err = memoryfile.Render(ctx, mem, alice, practices, 1<<20)
		if want := "# One\n\ntext\n\n- two\n\nthree\n"; err != nil || got != want {
			t.Errorf("%T: markdown renders as %q, %v; want %q", mem, got, err, want)
		}
		got, err = memoryfile.Render(ctx, mem, alice, decisions, 1<<20)
		if err != nil || got != "" {
			t.Errorf("%T: empty decisions render as %q, %v", mem, got, err)
		}
	}
	if _, err := memoryfile.Render(ctx, e.mem, alice, "CLAUDE.md", 1<<20); err == nil {
		t.Error("Render of a file that is not a memory file succeeded")
	}
	// Past max, paging stops: a page of small pages (two entries) past it.
	got, err := memoryfile.Render(ctx, smallPages{e.mem}, alice, progress, len(lines[0]))
	if want := lines[0] + lines[1]; err != nil || got != want {
		t.Errorf("rendered to %d bytes: %q, %v; want the first page past it, %q", len(lines[0]), got, err, want)
	}
}
