package symbols_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestTablesStartNothingForWhatIsGone: a table asked for once the set is
// closed, or for a view already done (a push has just replaced it), never
// starts: it reads no stored table, parses nothing and holds nothing.
func TestTablesStartNothingForWhatIsGone(t *testing.T) {
	dir := repotest.WriteDir(t, map[string]string{"a.go": "package a\n\nfunc A() {}\n"})
	open := func() *repo.Local {
		v, err := repo.NewLocal(dir, repo.LocalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	store := &memStore{}
	ts := symbols.NewTables(nil, func(repo.View) symbols.Store { return store })
	done := open()
	done.Close()
	ofDone := ts.For(done)
	ofDone.Close() // waits for whatever it started

	served := open()
	t.Cleanup(func() { served.Close() })
	ts.Close()
	afterClose := ts.For(served)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st := afterClose.Build(ctx, 0)
	afterClose.Close()
	for name, table := range map[string]*symbols.Table{"a done view's": ofDone, "a closed set's": afterClose} {
		if p := table.State().Progress; table.Parses.Load() != 0 || p.FilesParsed != 0 || p.Ready {
			t.Errorf("%s table parsed %d files: %+v", name, table.Parses.Load(), p)
		}
	}
	if st.Progress.FilesParsed != 0 {
		t.Errorf("a closed set's table answers from %d files", st.Progress.FilesParsed)
	}
	if loads, _ := store.counts(); loads != 0 {
		t.Errorf("%d stored tables read for tables that never serve", loads)
	}
}
