package memory

import (
	"context"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// FuzzReadCursor: read_memory answers whatever it is given as a cursor
// with a page or INVALID_INPUT: what a client sends (refused unless it was
// issued for the call), and any position in a cursor made with its key
// (as a key that leaked would let one be made).
func FuzzReadCursor(f *testing.F) {
	st := tooltest.BoltStores(f)
	key := cursor.RandomKey()
	s := service{memory: st.Memory, now: time.Now, cursors: key}
	call := toolkit.Call{Tenant: "acme"}
	var ids []string
	for _, c := range []string{"- one", "- two", "- three"} {
		e, err := st.Memory.Append(context.Background(), call.Tenant, "best_practices.md", store.NewEntry{Content: c}, time.Now())
		if err != nil {
			f.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	for _, seed := range []string{"", ids[0], ids[2], "0000000000000000000-0000000000000000", "\xff", "not-an-id"} {
		f.Add("bTo"+seed, seed)
	}
	f.Fuzz(func(t *testing.T, sent, after string) {
		in := readInput{File: "best_practices.md", Limit: 2}
		made := key.Scope(ReadTool, call.Tenant, "", in).Encode(after)
		for _, c := range []string{sent, made} {
			in.Cursor = c
			if _, err := s.read(context.Background(), call, in); err != nil {
				if te := toolerr.From(err); te == nil || te.Code != toolerr.InvalidInput {
					t.Fatalf("cursor %q: %v, want a page or INVALID_INPUT", c, err)
				}
			}
		}
	})
}
