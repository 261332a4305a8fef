package symbols

import (
	"log/slog"
	"sync"

	"github.com/toolshed/toolshed/shared/repo"
)

// Tables keeps the symbol table of each repository view it is asked for,
// started on first use and shared by every caller (every tenant reading
// that view). A table lives as long as its view is served: once the view
// is done (View.Done: its source replaced it with a newer snapshot, or
// dropped it to stay within its memory budget), its table is closed and
// forgotten, so that neither keeps the other's memory. Which views live,
// and how many, is the source's to say; each table counts what it holds
// against the source's memory budget (View.Hold).
type Tables struct {
	log    *slog.Logger
	stores func(repo.View) Store // nil: tables are not saved

	mu     sync.Mutex
	tables map[repo.View]*Table
	closed chan struct{} // closed by Close
}

// NewTables returns an empty set of tables; stores, when not nil, gives
// the Store of a view's table (nil for none).
func NewTables(log *slog.Logger, stores func(repo.View) Store) *Tables {
	return &Tables{log: log, stores: stores, tables: map[repo.View]*Table{}, closed: make(chan struct{})}
}

// For returns view's table, started on first use. A call that holds a view
// its source no longer serves (a push has just replaced it), or that asks
// once the set is closed, gets a table that never starts and says so
// (Progress.Stopped): nothing is kept, read or parsed for it.
func (ts *Tables) For(view repo.View) *Table {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t := ts.tables[view]; t != nil {
		return t
	}
	if isClosed(ts.closed) || isClosed(view.Done()) {
		return stoppedTable(view)
	}
	var store Store
	if ts.stores != nil {
		store = ts.stores(view)
	}
	t := NewTable(view, store, ts.log)
	ts.tables[view] = t
	go ts.closeWhenDone(view, t)
	return t
}

// closeWhenDone closes and forgets view's table t once the view is done
// (or leaves it to Close).
func (ts *Tables) closeWhenDone(view repo.View, t *Table) {
	select {
	case <-view.Done():
	case <-ts.closed:
		return
	}
	ts.mu.Lock()
	if ts.tables[view] == t {
		delete(ts.tables, view)
	}
	ts.mu.Unlock()
	// Close waits for the table's work to stop (a build stops between
	// files): outside the lock, so that For does not wait for it.
	t.Close()
}

// Close stops every table (each saves what it parsed since its last
// save); a table asked for later never starts.
func (ts *Tables) Close() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if !isClosed(ts.closed) {
		close(ts.closed)
	}
	for view, t := range ts.tables {
		t.Close()
		delete(ts.tables, view)
	}
}
