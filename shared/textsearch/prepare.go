package textsearch

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/toolshed/toolshed/shared/repo"
)

// Prepare makes, ahead of the first search, what searches use of each file
// beside its content (its trigram filter, repo.File.Trigrams), a worker
// per core, until done or ctx ends: a function that has just started does
// it at its init's full CPU instead of in its first call.
func Prepare(ctx context.Context, files []*repo.File) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(files) {
					return
				}
				files[i].Trigrams()
			}
		})
	}
	wg.Wait()
}
