package memory_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/memory"
)

// replayedWrite is write_memory_entry's result with its replayed flag.
type replayedWrite struct {
	writeResult
	Replayed *bool `json:"replayed"`
}

// TestWriteIdempotencyKey: write_memory_entry with an idempotencyKey,
// through the pipeline, on both backends.
func TestWriteIdempotencyKey(t *testing.T) {
	for _, be := range tooltest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Run("replay", func(t *testing.T) { testWriteReplay(t, be.NewStores(t)) })
			t.Run("invalid keys", func(t *testing.T) { testWriteInvalidKeys(t, be.NewStores(t)) })
			t.Run("concurrent", func(t *testing.T) { testWriteConcurrentKey(t, be.NewStores(t)) })
		})
	}
}

func testWriteReplay(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	var first replayedWrite
	o := e.OK(t, alice, memory.WriteTool, `{"file":"best_practices.md","content":"- Keep it short.","idempotencyKey":"note-1"}`, &first)
	if first.Replayed != nil || first.Bytes != 17 || first.Message != "Appended 17 bytes to best_practices.md" {
		t.Fatalf("first call: %s", o.Result)
	}
	// A retry, even with other content, appends nothing and answers the
	// first entry.
	var again replayedWrite
	o = e.OK(t, alice, memory.WriteTool, `{"file":"best_practices.md","content":"- Keep it much shorter.","idempotencyKey":"note-1"}`, &again)
	if again.ID != first.ID || again.Bytes != 17 || again.Replayed == nil || !*again.Replayed ||
		again.Message != "Entry already appended to best_practices.md with this idempotency key (17 bytes)" || o.Message != again.Message {
		t.Fatalf("retry: %s (message %q)", o.Result, o.Message)
	}
	// The key is per file and per tenant; other keys append.
	for _, call := range []struct{ tenant, args string }{
		{alice, `{"file":"progress_log.jsonl","entry":{"timestamp":"2025-01-15T10:00:00Z"},"idempotencyKey":"note-1"}`},
		{bob, `{"file":"best_practices.md","content":"- Bob's.","idempotencyKey":"note-1"}`},
		{alice, `{"file":"best_practices.md","content":"- Another.","idempotencyKey":"note-2"}`},
	} {
		var got replayedWrite
		e.OK(t, call.tenant, memory.WriteTool, call.args, &got)
		if got.Replayed != nil || got.ID == first.ID {
			t.Errorf("%s %s: %+v, want a new entry", call.tenant, call.args, got)
		}
	}
	if got := e.contents(t, alice, practices, 100); fmt.Sprint(got) != "[- Keep it short.\n - Another.\n]" {
		t.Errorf("alice's best practices: %q", got)
	}
	if got := e.contents(t, bob, practices, 100); len(got) != 1 {
		t.Errorf("bob's best practices: %q", got)
	}
}

func testWriteInvalidKeys(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	for _, key := range []string{`""`, `"a b"`, `"a#b"`, `"` + strings.Repeat("k", 129) + `"`, `true`} {
		err := e.Fail(t, alice, memory.WriteTool, `{"file":"best_practices.md","content":"x","idempotencyKey":`+key+`}`, toolerr.InvalidInput)
		if !strings.Contains(err.Message, "idempotencyKey") {
			t.Errorf("key %s: message %q does not name idempotencyKey", key, err.Message)
		}
	}
	e.empty(t, alice)
}

// testWriteConcurrentKey: calls with one key at once append one entry.
func testWriteConcurrentKey(t *testing.T, st store.Stores) {
	e := newEnv(t, st)
	const n = 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	made := 0
	ids := map[string]bool{}
	for i := range n {
		wg.Go(func() {
			o := e.Call(alice, memory.WriteTool, fmt.Sprintf(`{"file":"decisions.jsonl","entry":{"timestamp":"2025-01-15T10:00:00Z","n":%d},"idempotencyKey":"race"}`, i))
			mu.Lock()
			defer mu.Unlock()
			if !o.OK {
				if o.Error.Code != toolerr.StorageError || o.Error.RetryAfter < 1 || o.Error.Details["outcome"] != "unknown" {
					t.Errorf("call %d: %+v, want success or an in-progress STORAGE_ERROR", i, o.Error)
				}
				return
			}
			var got replayedWrite
			if err := json.Unmarshal(o.Result, &got); err != nil {
				t.Error(err)
			}
			ids[got.ID] = true
			if got.Replayed == nil {
				made++
			}
		})
	}
	wg.Wait()
	if made != 1 || len(ids) != 1 {
		t.Errorf("%d calls appended, answering %d ids; want 1 and 1", made, len(ids))
	}
	if got := e.contents(t, alice, decisions, 100); len(got) != 1 {
		t.Errorf("entries %q, want 1", got)
	}
}
