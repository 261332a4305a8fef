package webfetch_test

import (
	"context"
	"testing"

	"github.com/toolshed/toolshed/shared/tools/webfetch"
)

// BenchmarkFetch fetches a small page and a 1 MB body from the lab's
// servers: the cost of the checks, the guarded dial (kept-alive
// connections are reused), reading and decoding.
func BenchmarkFetch(b *testing.B) {
	for _, bc := range []struct{ name, path string }{
		{"page", "/page"},
		{"1MB", "/size/1048576"},
		{"1MB-gzip", "/gzip/1048576"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l := newLab(b)
			f := l.fetcher(b, webfetch.Options{})
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if _, err := f.Fetch(ctx, l.site+bc.path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
