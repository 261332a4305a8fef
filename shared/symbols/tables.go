package symbols

import (
	"log/slog"
	"sync"
	"time"

	"github.com/toolshed/toolshed/shared/repo"
)

// maxTables is how many views' tables Tables keeps: a deployed function
// sees a new view with each snapshot, and the older ones go.
const maxTables = 4

// Tables keeps the symbol table of each repository view it is asked for,
// started on first use and shared by every caller (every tenant reading
// that view). Beyond maxTables, the least recently used table is closed.
type Tables struct {
	log    *slog.Logger
	stores func(repo.View) Store // nil: tables are not saved

	mu     sync.Mutex
	tables map[repo.View]*tableUse
}

type tableUse struct {
	table *Table
	used  time.Time
}

// NewTables returns an empty set of tables; stores, when not nil, gives
// the Store of a view's table (nil for none).
func NewTables(log *slog.Logger, stores func(repo.View) Store) *Tables {
	return &Tables{log: log, stores: stores, tables: map[repo.View]*tableUse{}}
}

// For returns view's table, started on first use.
func (ts *Tables) For(view repo.View) *Table {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	u := ts.tables[view]
	if u == nil {
		if len(ts.tables) >= maxTables {
			ts.evictLocked()
		}
		var store Store
		if ts.stores != nil {
			store = ts.stores(view)
		}
		u = &tableUse{table: NewTable(view, store, ts.log)}
		ts.tables[view] = u
	}
	u.used = time.Now()
	return u.table
}

// evictLocked closes the least recently used table.
func (ts *Tables) evictLocked() {
	var oldest repo.View
	for view, u := range ts.tables {
		if oldest == nil || u.used.Before(ts.tables[oldest].used) {
			oldest = view
		}
	}
	// Close waits for the table's work to stop (a build stops between
	// files): done apart, so that For does not wait for it.
	go ts.tables[oldest].table.Close()
	delete(ts.tables, oldest)
}

// Close stops every table.
func (ts *Tables) Close() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for view, u := range ts.tables {
		u.table.Close()
		delete(ts.tables, view)
	}
}
