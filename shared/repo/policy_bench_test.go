package repo

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// goTree is the Go source tree: about 12,000 files and folders, a real
// repository's shape for the policy's hot paths.
func goTree(b *testing.B) (*os.Root, []string) {
	b.Helper()
	root, err := os.OpenRoot(filepath.Join(runtime.GOROOT(), "src"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { root.Close() })
	var paths []string
	err = fs.WalkDir(root.FS(), ".", func(p string, _ fs.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return root, paths
}

// BenchmarkPolicyCheck checks every path of the Go source tree (one op is
// the whole tree), as a listing of every folder does.
func BenchmarkPolicyCheck(b *testing.B) {
	_, paths := goTree(b)
	policy, err := NewPolicy([]string{"**/*.sqlite"}, ".toolshed")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range paths {
			policy.Check(p)
		}
	}
}

// BenchmarkWalk walks the Go source tree as the searchable walk does
// (ignore files, excluded folders, the policy), without reading files.
func BenchmarkWalk(b *testing.B) {
	root, _ := goTree(b)
	policy, err := NewPolicy(nil, "")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := walk(context.Background(), osRootFS(root), ".", &ignoreRules{}, policy, nil, func(candidate) { n++ }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkViewStat stats every path of the Go source tree through the
// local view's file system, as read_file and its dependency resolvers do.
func BenchmarkViewStat(b *testing.B) {
	root, paths := goTree(b)
	policy, err := NewPolicy(nil, "")
	if err != nil {
		b.Fatal(err)
	}
	dirFile, err := os.Open(filepath.Join(runtime.GOROOT(), "src"))
	if err != nil {
		b.Fatal(err)
	}
	defer dirFile.Close()
	view := localFS(osRootFS(root), dirFile, policy)
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range paths {
			view.Stat(p)
		}
	}
}
