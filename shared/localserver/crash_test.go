package localserver_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/workspace"
)

// ledger is what the writers were told was done.
type ledger struct {
	mu        sync.Mutex
	tasks     map[int64]string    // acknowledged add_task: id → title
	completed map[int64]bool      // acknowledged complete_task
	deleted   map[int64]bool      // acknowledged delete_task
	deleting  map[int64]bool      // delete_task tried (acknowledged or not)
	entries   map[string]string   // acknowledged write_memory_entry: id → content
	files     map[string][32]byte // acknowledged file-io writes: path → hash of the content
	tried     map[string][32]byte // every file-io write tried: path → hash
	acks      int
}

// TestCrashLeavesNothingBehind kills the local server (SIGKILL) while
// writers call every writing tool at once, restarts it on the same data
// directory, and checks, three times over: every acknowledged write is
// there, as acknowledged; a write that was not acknowledged is there whole
// or not at all; task ids are unique and ascending; and nothing an
// interrupted write left is visible, counted or on disk.
func TestCrashLeavesNothingBehind(t *testing.T) {
	data := t.TempDir()
	srv := startProcess(t, map[string]string{
		"TOOLSHED_DATA_DIR": data, "TOOLSHED_AUTH": "off", "TOOLSHED_LOCAL_TENANT": "acme",
		"TOOLSHED_REPO_DIR": repotest.WriteDir(t, map[string]string{"README.md": "# Crash\n"}),
		"TOOLSHED_RATE_LIMITS": "add_task=1000000,complete_task=1000000,delete_task=1000000,write_memory_entry=1000000,file-io=1000000," +
			"list_tasks=1000000,read_memory=1000000",
	})
	l := &ledger{tasks: map[int64]string{}, completed: map[int64]bool{}, deleted: map[int64]bool{}, deleting: map[int64]bool{},
		entries: map[string]string{}, files: map[string][32]byte{}, tried: map[string][32]byte{}}
	for round := range 3 {
		before := l.acks
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Go(func() { l.write(srv, fmt.Sprintf("r%dw%d", round, w), stop) })
		}
		time.Sleep(1500 * time.Millisecond)
		srv.kill() // in the middle of the writes
		close(stop)
		wg.Wait()
		left := leftovers(data)
		srv.start(t)
		if l.acks == before {
			t.Fatalf("round %d: no write was acknowledged before the crash", round)
		}
		l.check(t, srv, data, fmt.Sprintf("r%d", round))
		t.Logf("round %d: %d writes acknowledged before the crash, all there after the restart; the crash left %d temporary files, removed at the restart",
			round, l.acks-before, len(left))
	}
}

// write calls the writing tools in turn until stop.
func (l *ledger) write(srv *serverProcess, who string, stop chan struct{}) {
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		switch n % 4 {
		case 0:
			title := fmt.Sprintf("%s task %d", who, n)
			if r, err := srv.call("add_task", fmt.Sprintf(`{"title":%q}`, title)); err == nil && r.OK {
				var task struct {
					ID int64 `json:"id"`
				}
				json.Unmarshal(r.Result, &task)
				l.ack(func() { l.tasks[task.ID] = title })
				if n%8 == 0 {
					if r, err := srv.call("complete_task", fmt.Sprintf(`{"task_id":%d}`, task.ID)); err == nil && r.OK {
						l.ack(func() { l.completed[task.ID] = true })
					}
				} else {
					l.mu.Lock()
					l.deleting[task.ID] = true
					l.mu.Unlock()
					if r, err := srv.call("delete_task", fmt.Sprintf(`{"task_id":%d}`, task.ID)); err == nil && r.OK {
						l.ack(func() { l.deleted[task.ID] = true })
					}
				}
			}
		case 1:
			content := fmt.Sprintf("%s decided %d", who, n)
			if r, err := srv.call("write_memory_entry", fmt.Sprintf(`{"file":"decisions.jsonl","entry":{"timestamp":"2026-01-01T00:00:00Z","decision":%q}}`, content)); err == nil && r.OK {
				var e struct {
					ID string `json:"id"`
				}
				json.Unmarshal(r.Result, &e)
				l.ack(func() { l.entries[e.ID] = content })
			}
		default:
			path := fmt.Sprintf("%s/f%d.txt", who, n)
			content := strings.Repeat(fmt.Sprintf("%s %d\n", who, n), 250<<10/len(who+" 0000\n"))
			sum := sha256.Sum256([]byte(content))
			l.mu.Lock()
			l.tried[path] = sum
			l.mu.Unlock()
			if r, err := srv.call("file-io", fmt.Sprintf(`{"command":"write_file","path":%q,"content":%q}`, path, content)); err == nil && r.OK {
				l.ack(func() { l.files[path] = sum })
			}
		}
	}
}

func (l *ledger) ack(record func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	record()
	l.acks++
}

// check compares what the restarted server holds with the ledger (the
// files of this round: those of earlier rounds were checked then, and
// nothing writes them again).
func (l *ledger) check(t *testing.T, srv *serverProcess, data, round string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	// Tasks: ids unique and ascending; acknowledged ones as acknowledged.
	found := map[int64]string{}
	status := map[int64]string{}
	var last int64
	for cursor := ""; ; {
		args := `{"limit":100}`
		if cursor != "" {
			args = fmt.Sprintf(`{"limit":100,"cursor":%q}`, cursor)
		}
		r, err := srv.call("list_tasks", args)
		if err != nil || !r.OK {
			t.Fatalf("list_tasks: %v %+v", err, r)
		}
		var page struct {
			Tasks []struct {
				ID     int64  `json:"id"`
				Title  string `json:"title"`
				Status string `json:"status"`
			} `json:"tasks"`
			NextCursor *string `json:"next_cursor"`
		}
		json.Unmarshal(r.Result, &page)
		for _, task := range page.Tasks {
			if task.ID <= last {
				t.Errorf("task ids out of order or repeated: %d after %d", task.ID, last)
			}
			last = task.ID
			found[task.ID], status[task.ID] = task.Title, task.Status
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			break
		}
		cursor = *page.NextCursor
	}
	for id, title := range l.tasks {
		got, ok := found[id]
		switch {
		case l.deleted[id] && ok:
			t.Errorf("task %d was deleted (acknowledged) and is back", id)
		case !l.deleting[id] && !ok:
			t.Errorf("acknowledged task %d (%q) is lost", id, title)
		case ok && got != title:
			t.Errorf("task %d is %q, acknowledged as %q", id, got, title)
		case ok && l.completed[id] && status[id] != "completed":
			t.Errorf("task %d was completed (acknowledged) and is %s", id, status[id])
		}
	}
	// Memory entries: every acknowledged one, whole.
	entries := map[string]string{}
	for cursor := ""; ; {
		args := `{"file":"decisions.jsonl","limit":100}`
		if cursor != "" {
			args = fmt.Sprintf(`{"file":"decisions.jsonl","limit":100,"cursor":%q}`, cursor)
		}
		r, err := srv.call("read_memory", args)
		if err != nil || !r.OK {
			t.Fatalf("read_memory: %v %+v", err, r)
		}
		var page struct {
			Entries []struct {
				ID      string `json:"id"`
				Content string `json:"content"`
			} `json:"entries"`
			NextCursor *string `json:"next_cursor"`
		}
		json.Unmarshal(r.Result, &page)
		for _, e := range page.Entries {
			var line map[string]any
			json.Unmarshal([]byte(e.Content), &line)
			entries[e.ID], _ = line["decision"].(string)
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			break
		}
		cursor = *page.NextCursor
	}
	for id, content := range l.entries {
		if entries[id] != content {
			t.Errorf("acknowledged memory entry %s: %q, want %q", id, entries[id], content)
		}
	}
	// Files: acknowledged ones whole; the others whole or absent.
	for path, sum := range l.tried {
		if !strings.HasPrefix(path, round+"w") {
			continue
		}
		r, err := srv.call("file-io", fmt.Sprintf(`{"command":"read_file","path":%q}`, path))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Contents string `json:"contents"`
		}
		json.Unmarshal(r.Result, &got)
		acked, wasAcked := l.files[path]
		switch {
		case wasAcked && (!r.OK || sha256.Sum256([]byte(got.Contents)) != acked):
			t.Errorf("acknowledged file %s: %s %q", path, r.Code, r.Error)
		case !r.OK && r.Code != "RESOURCE_NOT_FOUND":
			t.Errorf("unacknowledged file %s: %s %q", path, r.Code, r.Error)
		case r.OK && sha256.Sum256([]byte(got.Contents)) != sum:
			t.Errorf("unacknowledged file %s is half there (%d bytes)", path, len(got.Contents))
		}
	}
	// Nothing an interrupted write left is on disk (the restart swept it),
	// and the workspace holds only files the writers wrote.
	for _, p := range leftovers(data) {
		t.Errorf("left by an interrupted write: %s", p)
	}
	ws := filepath.Join(data, "workspace", "acme")
	filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(ws, p)
		if _, tried := l.tried[filepath.ToSlash(rel)]; err == nil && !d.IsDir() && !tried {
			t.Errorf("a file no writer wrote is in the workspace: %s", rel)
		}
		return err
	})
}

// leftovers lists the temporary files of interrupted writes under data:
// what the staging folder holds.
func leftovers(data string) []string {
	var out []string
	filepath.WalkDir(filepath.Join(data, "workspace", workspace.Staging), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	return out
}
