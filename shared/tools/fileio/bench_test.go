package fileio_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/workspace"
)

// BenchmarkDir measures the local workspace: a 4 KiB write (measuring the
// workspace for the quota, a synced temporary file, a rename) into an
// empty workspace and into one holding 1,000 files, and a 4 KiB read.
func BenchmarkDir(b *testing.B) {
	ctx := context.Background()
	data := []byte(strings.Repeat("x", 4<<10))
	for _, existing := range []int{0, 1000} {
		b.Run(fmt.Sprintf("write-4KiB-among-%d-files", existing), func(b *testing.B) {
			d := workspace.NewDir(b.TempDir(), workspace.Quota{Bytes: 1 << 30, Files: 10000})
			for i := range existing {
				if err := d.Write(ctx, alice, fmt.Sprintf("f/%03d/%d.txt", i/100, i), data); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				if err := d.Write(ctx, alice, "bench.txt", data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("read-4KiB", func(b *testing.B) {
		d := workspace.NewDir(b.TempDir(), generous)
		if err := d.Write(ctx, alice, "bench.txt", data); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := d.Read(ctx, alice, "bench.txt"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
