package goscip_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/goscip"
)

// TestStandardLibraryTree indexes three packages of the installed Go's
// source tree, a module "std" that go list loads only as a GOROOT's src,
// through the temporary GOROOT: the documents are the packages' files by
// their path in the tree; symbols name the standard library at the tree's
// version; references cross packages (which scip-go's index of std lacks)
// and a type implements an interface of another package. The temporary
// GOROOT is gone afterwards.
func TestStandardLibraryTree(t *testing.T) {
	goroot := goEnv(t, "GOROOT")
	src := filepath.Join(goroot, "src")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	idx, stats := emit(t, src, []string{"errors", "io", "strings"}, goscip.Options{})

	var want []string
	for _, line := range strings.Fields(goList(t, src, "-f", `{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}} {{end}}`, "errors", "io", "strings")) {
		rel, _ := filepath.Rel(src, line)
		want = append(want, filepath.ToSlash(rel))
	}
	slices.Sort(want)
	if got := documentPaths(idx); !slices.Equal(got, want) || stats.Modules != 2 {
		t.Errorf("documents %v (%d modules: std and cmd), want %v", got, stats.Modules, want)
	}
	version, _ := os.ReadFile(filepath.Join(goroot, "VERSION"))
	std := "scip-go gomod github.com/golang/go/src " + strings.TrimSpace(strings.SplitN(string(version), "\n", 2)[0]) + " "
	occ := occurrences(idx, everything)
	for pos, symbols := range occ {
		if !strings.HasPrefix(symbols, std) {
			t.Errorf("at %s: %s, want symbols starting %q", pos, symbols, std)
		}
	}
	if !slices.ContainsFunc(slices.Collect(maps.Values(occ)), func(s string) bool { return s == std+"io/Writer# 8" }) {
		t.Error("no reference to io.Writer")
	}
	if rels := relationships(idx, everything)[std+"strings/Reader#"]; !strings.Contains(rels, std+"io/Reader# impl=true") {
		t.Errorf("strings.Reader implements %q, want io.Reader among them", rels)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}
