package symbols_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// memStore is a Store in memory, counting its loads and saves.
type memStore struct {
	mu           sync.Mutex
	data         []byte
	loads, saves int
}

func (m *memStore) Load(context.Context) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loads++
	if m.data == nil {
		return nil, fs.ErrNotExist
	}
	return m.data, nil
}

func (m *memStore) Save(_ context.Context, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.data, m.saves = slices.Clone(data), m.saves+1
	return nil
}

// TestStoredTable: a table saves what it parsed once ready; a table of
// the same files started from the store parses none of them, and finds
// the same symbols; a file changed since is parsed again, alone; changes
// a table follows are saved when it closes; a store that holds garbage
// costs a full parse, nothing else.
func TestStoredTable(t *testing.T) {
	requireTreeSitter(t)
	dir := repotest.WriteDir(t, tableFiles)
	store := &memStore{}
	start := func() (*symbols.Table, *symbols.State) {
		t.Helper()
		v, err := repo.NewLocal(dir, repo.LocalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { v.Close() })
		table := symbols.NewTable(v, store, nil)
		t.Cleanup(table.Close)
		return table, settled(t, table)
	}
	find := func(st *symbols.State) []string {
		hits, err := st.Find(context.Background(), symbols.Query{Name: "read", Match: symbols.Substring})
		if err != nil {
			t.Fatal(err)
		}
		out := names(hits)
		for _, h := range hits {
			out = append(out, fmt.Sprint(h.Symbol.Start, h.Symbol.End, h.Symbol.From, h.Symbol.To, h.Symbol.Kind))
		}
		return out
	}

	first, st := start()
	want := find(st)
	first.Close()
	if n := first.Parses.Load(); n != 3 || store.saves != 1 {
		t.Fatalf("first table: %d parses, %d saves; want 3 and 1", n, store.saves)
	}

	second, st := start()
	if n := second.Parses.Load(); n != 0 {
		t.Errorf("a table started from the store parsed %d files", n)
	}
	if got := find(st); !slices.Equal(got, want) {
		t.Errorf("from the store: %v\nwant %v", got, want)
	}
	second.Close()
	if store.saves != 1 {
		t.Errorf("a table that parsed nothing saved (%d saves)", store.saves)
	}

	if err := os.WriteFile(filepath.Join(dir, "web/app.ts"), []byte("export class WriterView {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	third, _ := start()
	if n := third.Parses.Load(); n != 1 {
		t.Errorf("one file changed: %d parses, want 1", n)
	}
	// A change while it runs is saved when it closes.
	if err := os.WriteFile(filepath.Join(dir, "a/more.go"), []byte("package a\n\nfunc ReadMore() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		hits, _ := settled(t, third).Find(context.Background(), symbols.Query{Name: "ReadMore", Match: symbols.Exact})
		if len(hits) == 1 {
			break
		} else if time.Now().After(deadline) {
			t.Fatal("the new file's symbol never showed")
		}
	}
	third.Close()
	if fifth, _ := start(); fifth.Parses.Load() != 0 {
		t.Errorf("after a close that saved the change: %d parses, want 0", fifth.Parses.Load())
	}

	store.data = []byte("not a table")
	fourth, st := start()
	if n := fourth.Parses.Load(); n != 4 {
		t.Errorf("from a store of garbage: %d parses, want 4 (every file)", n)
	}
	if got := find(st); len(got) == 0 {
		t.Error("nothing found after a store of garbage")
	}
}

// counts returns the loads and saves so far.
func (m *memStore) counts() (loads, saves int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.loads, m.saves
}

// TestTableOfADoneViewIsNotSaved: a table whose view is done (its source
// replaced or dropped it) does not save what it parsed since its last
// save, for nobody will serve it; a table closed while its view is served
// (the process closing) saves it.
func TestTableOfADoneViewIsNotSaved(t *testing.T) {
	for _, tt := range []struct {
		name      string
		viewFirst bool // the view is done before the table closes
		saves     int
	}{{"closed while served", false, 2}, {"view done", true, 1}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := repotest.WriteDir(t, map[string]string{"a.go": "package a\n\nfunc A() {}\n"})
			v, err := repo.NewLocal(dir, repo.LocalOptions{})
			if err != nil {
				t.Fatal(err)
			}
			store := &memStore{}
			table := symbols.NewTable(v, store, nil)
			settled(t, table) // the first build is saved
			if err := os.WriteFile(filepath.Join(dir, "b.go"), []byte("package a\n\nfunc B() {}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if hits, _ := settled(t, table).Find(context.Background(), symbols.Query{Name: "B", Match: symbols.Exact}); len(hits) == 1 {
					break
				} else if time.Now().After(deadline) {
					t.Fatal("the new file's symbol never showed")
				}
			}
			if tt.viewFirst {
				v.Close()
				table.Close()
			} else {
				table.Close()
				v.Close()
			}
			if _, saves := store.counts(); saves != tt.saves {
				t.Errorf("%d saves, want %d", saves, tt.saves)
			}
		})
	}
}

// TestTableIsBuiltByItsCalls: nothing builds a table but the calls that
// read it, for Lambda freezes a function between them: a table no call
// builds reads no stored table and parses nothing; each call, given a
// slice of work, takes it on from where the last one stopped, never
// back; and the call that finishes it has saved it when it returns.
func TestTableIsBuiltByItsCalls(t *testing.T) {
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("p/f%03d.go", i)] = fmt.Sprintf("package p\n\n// F%d does %d.\nfunc F%d() int { return %d }\n\ntype T%d struct{ a, b int }\n", i, i, i, i, i)
	}
	v, err := repo.NewLocal(repotest.WriteDir(t, files), repo.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	store := &memStore{}
	table := symbols.NewTable(v, store, nil)
	t.Cleanup(table.Close)
	time.Sleep(100 * time.Millisecond) // what work in the background would have done meanwhile
	if loads, _ := store.counts(); loads != 0 || table.Parses.Load() != 0 {
		t.Fatalf("before any call: %d stored tables read, %d files parsed", loads, table.Parses.Load())
	}
	ctx := context.Background()
	calls, parsed := 0, 0
	for st := (&symbols.State{}); !st.Progress.Ready; calls++ {
		st = table.Build(ctx, time.Millisecond)
		if st.Progress.FilesParsed < parsed {
			t.Fatalf("call %d: %d files parsed, %d before", calls+1, st.Progress.FilesParsed, parsed)
		}
		parsed = st.Progress.FilesParsed
		if calls == 10000 {
			t.Fatalf("not ready after %d calls: %+v", calls, st.Progress)
		}
	}
	if loads, saves := store.counts(); loads != 1 || saves != 1 || parsed != 300 {
		t.Errorf("ready after %d calls: %d files parsed, %d loads and %d saves, want 300, 1 and 1", calls, parsed, loads, saves)
	}
}
