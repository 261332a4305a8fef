package textsearch_test

import (
	"context"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/textsearch"
)

// BenchmarkSearch searches the Go source tree in memory for each query
// class of `make bench-grep` (which compares with ripgrep).
func BenchmarkSearch(b *testing.B) {
	snap, err := repo.NewLocal(filepath.Join(runtime.GOROOT(), "src"), repo.LocalOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer snap.Close()
	files, err := snap.Searchable(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range files {
		f.Trigrams()
	}
	for _, c := range []struct {
		name, pattern string
		caseSensitive bool
	}{
		{"literal", "func", true},
		{"literal-i", "errorf", false},
		{"regex", "interface.*Context", true},
		{"regex-i", "interface.*Context", false},
		{"alternation", "TODO|FIXME|XXX", true},
		{"alternation-i", "TODO|FIXME|XXX", false},
		{"nomatch", "xyznonexistent123", true},
		{"nomatch-i", "xyznonexistent123", false},
		{"whole-file", "[A-Z]{3,}", true},
		{"whole-file-rare", `[0-9]{30}`, true},
	} {
		q, err := textsearch.Compile(c.pattern, c.caseSensitive)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.Logf("%s: %s", c.pattern, q)
			before := cpuTime()
			for b.Loop() {
				if res := textsearch.Search(context.Background(), files, q, textsearch.Options{Limit: 50}); !res.Complete {
					b.Fatal("search incomplete without a deadline")
				}
			}
			// CPU time is steadier than wall time on a shared machine.
			b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
