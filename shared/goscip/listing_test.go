package goscip_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/toolshed/toolshed/shared/goscip"
)

// TestListings: go/packages run as a Listing says loads a module's files,
// which Document names as Emit does — the standard library's through the
// temporary GOROOT, by their path in the tree — and the function Listings
// returns removes what it made.
func TestListings(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	tests := []struct {
		dir, pattern string
		modules      []string // in path order; the pattern is the last one's
		want         string   // a document of the pattern's package
	}{
		{fixture, "./shapes", []string{"example.com/fixture"}, "shapes/shapes.go"},
		{filepath.Join(goEnv(t, "GOROOT"), "src"), "errors", []string{"cmd", "std"}, "errors/errors.go"},
	}
	for _, tc := range tests {
		listings, done, err := goscip.Listings(tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		var modules []string
		for _, l := range listings {
			modules = append(modules, l.Module)
		}
		if strings.Join(modules, " ") != strings.Join(tc.modules, " ") {
			t.Errorf("%s: modules %v, want %v", tc.dir, modules, tc.modules)
		}
		l := listings[len(listings)-1]
		pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedFiles, Dir: l.Dir, Env: l.Env}, tc.pattern)
		if err != nil || len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
			t.Fatalf("%s: loading %s: %v %v", tc.dir, tc.pattern, err, pkgs)
		}
		var docs []string
		for _, f := range pkgs[0].GoFiles {
			doc, ok := l.Document(f)
			if !ok {
				t.Errorf("%s: %s is outside the tree", tc.dir, f)
			}
			docs = append(docs, doc)
		}
		if !strings.Contains(" "+strings.Join(docs, " ")+" ", " "+tc.want+" ") {
			t.Errorf("%s: documents %v, want %s among them", tc.dir, docs, tc.want)
		}
		done()
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}
