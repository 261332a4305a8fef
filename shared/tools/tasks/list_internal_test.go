package tasks

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// FuzzListCursor: list_tasks answers whatever it is given as a cursor
// with a page or INVALID_INPUT: what a client sends (refused unless it was
// issued for the call), and any position in a cursor made with its key
// (as a key that leaked would let one be made).
func FuzzListCursor(f *testing.F) {
	st := tooltest.BoltStores(f)
	key := cursor.RandomKey()
	s := service{tasks: st.Tasks, now: time.Now, cursors: key}
	call := toolkit.Call{Tenant: "acme"}
	for i := range 3 {
		if _, err := st.Tasks.Create(context.Background(), call.Tenant, store.NewTask{Title: fmt.Sprint("task ", i)}, time.Now()); err != nil {
			f.Fatal(err)
		}
	}
	f.Add("", uint64(0))
	f.Add("dDox", uint64(1))
	f.Add("not-a-cursor", uint64(2))
	f.Add("dDo5MjIzMzcyMDM2ODU0Nzc1ODA3", uint64(math.MaxUint64))
	f.Fuzz(func(t *testing.T, sent string, after uint64) {
		in := listInput{Limit: 2}
		made := key.Scope(ListTool, call.Tenant, "", in).Encode(int64(min(after, math.MaxInt64)))
		for _, c := range []string{sent, made} {
			in.Cursor = c
			if _, err := s.list(context.Background(), call, in); err != nil {
				if te := toolerr.From(err); te == nil || te.Code != toolerr.InvalidInput {
					t.Fatalf("cursor %q: %v, want a page or INVALID_INPUT", c, err)
				}
			}
		}
	})
}
