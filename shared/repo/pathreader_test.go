package repo_test

import (
	"bytes"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// pathReaderFiles add to viewFiles what else search skips: ignored
// files (a nested .gitignore, one re-included, .ignore), excluded and
// hidden folders, a binary file.
var pathReaderFiles = map[string]string{
	".gitignore":              "*.log\ngen/\n!keep.log\n",
	"app.log":                 "ignored\n",
	"keep.log":                "re-included\n",
	"gen/out.go":              "package gen\n",
	"src/.gitignore":          "local.go\n",
	"src/local.go":            "package src\n",
	"src/app/local.go":        "package app\n",
	"docs/.ignore":            "*.md\n",
	"node_modules/m/index.js": "module.exports = 1\n",
	".hidden/h.go":            "package h\n",
	"src/.cache/c.go":         "package c\n",
	"bin.dat":                 "a\x00b",
}

// TestPathReader: the PathReader of each view finds searchable exactly
// the files Searchable lists, with their content, reading only theirs.
func TestPathReader(t *testing.T) {
	files := maps.Clone(viewFiles)
	maps.Copy(files, pathReaderFiles)
	dir := repotest.WriteDir(t, files)
	var zipped bytes.Buffer
	if _, err := repo.Pack(&zipped, dir, repotest.Files(t, dir), repo.DefaultMaxBytes); err != nil {
		t.Fatal(err)
	}
	paths := slices.Sorted(maps.Keys(files))
	for name, target := range viewLinks {
		mustSymlink(t, target, filepath.Join(dir, filepath.FromSlash(name)))
		paths = append(paths, name)
	}
	paths = append(paths, "missing.go", "docs", "/main.go", "src/../main.go", "docslink/guide.md", "self/main.go")
	policy, err := repo.LocalPolicy(dir, filepath.Join(dir, "data"), nil)
	if err != nil {
		t.Fatal(err)
	}
	local, err := repo.NewLocal(dir, repo.LocalOptions{Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	snap, err := repo.OpenZip(zipped.Bytes(), "fixture", policy)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []namedView{{"local", local, nil}, {"zip", snap, nil}} {
		t.Run(v.name, func(t *testing.T) {
			listed, err := v.view.Searchable(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]*repo.File{}
			for _, f := range listed {
				want[f.Path] = f
			}
			r := repo.NewPathReader(v.view)
			for _, p := range paths {
				got, err := r.File(p)
				if err != nil {
					t.Fatalf("File(%q): %v", p, err)
				}
				w := want[p]
				if (got == nil) != (w == nil) || got != nil && (got.Path != p || got.Hash() != w.Hash()) {
					t.Errorf("File(%q) = %v, Searchable lists %v", p, got, w)
				}
			}
		})
	}
}
