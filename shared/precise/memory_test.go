package precise_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/sourcegraph/scip/bindings/go/scip"

	"github.com/toolshed/toolshed/shared/precise/fromscip"
)

// TestMemory: Memory tells what an open index holds, within a factor of
// the heap its opening keeps, so that a process can budget it.
func TestMemory(t *testing.T) {
	x := &scip.Index{Metadata: meta("scip-go")}
	for i := range 20000 {
		s := fmt.Sprintf("scip-go gomod example.com/m v1 `example.com/m/p%d`/F%d().", i%50, i)
		x.Documents = append(x.Documents, goDoc(fmt.Sprintf("pkg%d/sub/file%05d.go", i%50, i), occ(s, 1, 0, 5, 6), occ(s, 0, 3, 1, 2)))
	}
	store := build(t, marshal(t, x), fromscip.Options{Commit: "c"})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix := open(t, store)
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("Memory %d, held %d", ix.Memory(), held)
	if m := ix.Memory(); m < held/2 || m > held*2 {
		t.Errorf("Memory says %d bytes; opening holds %d", m, held)
	}
	runtime.KeepAlive(ix)
}
