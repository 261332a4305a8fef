package goscip

import "path/filepath"

// A Listing is how Emit has go list load one module under a directory,
// for a program that loads it the same way to hold Emit's index against
// go/types' own answers (scripts/benchnav compares them on the Go tree):
// go/packages run in Dir with Env lists the same packages, from the same
// files, under the same build settings (no cgo: files that import "C"
// are left out of both).
type Listing struct {
	Module string // the module path (std and cmd for the Go tree)
	// Dir is where go list runs: the module's directory, or for a
	// standard-library tree the temporary GOROOT's copy of it.
	Dir string
	Env []string
	// Document is the document path Emit gives a file go list names
	// (relative to the directory given to Listings, slash-separated),
	// and whether Emit writes files from there at all.
	Document func(file string) (string, bool)
}

// Listings returns the Listing of every module under dir, in the order
// Emit indexes them, and a function that removes what they need (the
// temporary GOROOT, the copies of go.mod): call it when done loading.
func Listings(dir string) ([]Listing, func(), error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, func() {}, err
	}
	mods, err := findModules(root)
	if err != nil {
		return nil, func() {}, err
	}
	goroots := newGoroots()
	cleanups := []func(){goroots.remove}
	done := func() {
		for _, c := range cleanups {
			c()
		}
	}
	var out []Listing
	for _, m := range mods {
		listDir, l, paths, err := listSetup(root, m, goroots)
		if err != nil {
			done()
			return nil, func() {}, err
		}
		if l.cleanup != nil {
			cleanups = append(cleanups, l.cleanup)
		}
		out = append(out, Listing{Module: m.path, Dir: listDir, Env: l.vars, Document: paths.document})
	}
	return out, done, nil
}
