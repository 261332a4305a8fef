package symbols

import (
	"log/slog"
	"sync"

	"github.com/toolshed/toolshed/shared/repo"
)

// Tables keeps the symbol table of each repository view it is asked for,
// made on first use and shared by every caller (every tenant reading
// that view). A table lives as long as its view is served: once the view
// is done (View.Done: its source replaced it with a newer snapshot, or
// dropped it to stay within its memory budget), the next For forgets its
// table, so that neither keeps the other's memory. Which views live, and
// how many, is the source's to say; each table counts what it holds
// against the source's memory budget (View.Hold).
type Tables struct {
	log    *slog.Logger
	stores func(repo.View) Store // nil: tables are not saved

	mu     sync.Mutex
	tables map[repo.View]*Table
	closed bool // by Close
}

// NewTables returns an empty set of tables; stores, when not nil, gives
// the Store of a view's table (nil for none).
func NewTables(log *slog.Logger, stores func(repo.View) Store) *Tables {
	return &Tables{log: log, stores: stores, tables: map[repo.View]*Table{}}
}

// For returns view's table, made on first use. A call that holds a view
// its source no longer serves (a push has just replaced it), or that asks
// once the set is closed, gets a table that never builds and says so
// (Progress.Stopped): nothing is kept, read or parsed for it.
func (ts *Tables) For(view repo.View) *Table {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for v := range ts.tables {
		if isClosed(v.Done()) {
			// Its table builds no more (see Table.Build), and is saved
			// no more: nobody serves the view.
			delete(ts.tables, v)
		}
	}
	if t := ts.tables[view]; t != nil {
		return t
	}
	if ts.closed || isClosed(view.Done()) {
		return stoppedTable(view)
	}
	var store Store
	if ts.stores != nil {
		store = ts.stores(view)
	}
	t := NewTable(view, store, ts.log)
	ts.tables[view] = t
	return t
}

// Close closes every table (each saves what it parsed since its last
// save); a table asked for later never builds.
func (ts *Tables) Close() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.closed = true
	for view, t := range ts.tables {
		t.Close()
		delete(ts.tables, view)
	}
}
