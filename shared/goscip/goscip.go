// Package goscip writes a SCIP index of Go code: every identifier the
// compiler resolves, as definitions and references of SCIP symbols, with
// each symbol's signature, doc comment, kind and implementations.
//
// It is scip-go's output, made with less memory. go/packages only lists
// the packages (names, files, imports, modules: no syntax, no types);
// go/types then checks them one by one in dependency order, twice:
//
//  1. Every package, declarations only (function bodies dropped), so that
//     a package's importers can be checked against it. What remains of a
//     package afterwards is its *types.Package, the SCIP symbols of its
//     declarations (by position) and the method sets of its interfaces.
//  2. Each package to index, in full (bodies and types.Info), against the
//     declarations of step 1. Its documents are written as soon as they
//     are made, and its syntax and types.Info are dropped before the next.
//
// Step 1 comes first so that a type's implementations are known when its
// package is written: an interface can be declared in a package checked
// after the type's.
//
// Symbols follow scip-go v0.1.26 exactly (the same rules name the same
// declarations, see names.go), so our indexes link with scip-go's: scheme
// scip-go, manager gomod, the module path and version, then descriptors
// such as `net/http`/Client#Do(). The standard library (modules std and
// cmd) is named github.com/golang/go/src at its Go version; locals are
// "local N", numbered per document. Where this package differs from
// scip-go, on purpose: it writes no document for the test main go test
// generates (outside the module); indexing a whole module (./...), it
// writes the packages of the module's vendor folder too, named as their
// uses are (scip-go, like go list ./..., leaves them out, so a use of one
// has no definition); an interface that embeds error requires
// an Error method (implementations.go); relationships are not repeated; a
// method promoted from another package's type gets no relationship (that
// package is written already); an import's occurrence spans the path as
// written (scip-go's spans the package path, longer for the standard
// library's vendored packages); a blank import (import _ "p") does not
// turn the file's uses of p into a local (scip-go's does); and symbol
// information says more (kinds,
// display names, the doc comments of fields and of grouped declarations,
// type parameters in signatures).
//
// A directory holds one or more modules (every go.mod below it, except in
// vendor, testdata, node_modules and folders whose name starts with . or
// _); each is indexed in turn and its documents are named by their path
// relative to the directory. A tree whose go.mod says "module std" (the
// Go source tree's src) is listed through a temporary GOROOT whose src is
// that tree. go list runs without network, workspace, toolchain switch or
// cgo, and never writes the module's go.mod or go.sum: a dependency
// missing from the module cache leaves its uses unresolved. A module with
// a vendor folder (vendor/modules.txt) takes its dependencies from there,
// as go build does, unless go list refuses the folder (it disagrees with
// go.mod): then from the module cache.
package goscip

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Options tune Emit.
type Options struct {
	// Tests indexes _test.go files too: each package's internal tests (in
	// the package) and external tests (package p_test).
	Tests bool
	// ModuleVersion is the version of the indexed modules in their symbols
	// (scip-go's -module-version, e.g. a commit or a tag); "" is ".".
	ModuleVersion string
	// MaxDocuments and MaxBytes stop the index before the document that
	// would pass them (0: no limit), with an error wrapping ErrLimit.
	MaxDocuments int
	MaxBytes     int64
}

// Stats says what Emit wrote.
type Stats struct {
	Modules int // modules indexed
	// Skipped lists the modules go list could not load (a go.mod it
	// refuses), each "dir: why"; the others are indexed.
	Skipped     []string
	Packages    int   // packages whose documents were written (a test variant counts once)
	Checked     int   // package type-checks, dependencies and both steps included
	Documents   int   // documents written (one per file)
	Occurrences int   // occurrences in them
	Symbols     int   // symbol information records in them (locals included)
	Bytes       int64 // SCIP bytes written
	// ListErrors counts the packages go list reported a problem with (a
	// missing dependency, a syntax error); TypeErrors the errors go/types
	// reported in the indexed packages. Neither stops the index: what they
	// touch stays unresolved.
	ListErrors int
	TypeErrors int
	Elapsed    time.Duration
}

// ErrLimit is wrapped by the error Emit returns when the index reached
// Options.MaxDocuments or Options.MaxBytes.
var ErrLimit = errors.New("index limit reached")

// Emit writes the SCIP index of the Go packages matching patterns (go list
// patterns, default ./...; a relative one names folders from dir, see
// modulePatterns) in each module under dir to w: the metadata, then each
// document as it is made. On an error (ctx done, a limit, a
// write that failed) what was written is a valid SCIP index of the
// documents before it, and Stats counts them.
func Emit(ctx context.Context, dir string, patterns []string, w io.Writer, o Options) (Stats, error) {
	start := time.Now()
	root, err := filepath.Abs(dir)
	if err != nil {
		return Stats{}, fmt.Errorf("goscip: %w", err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return Stats{}, fmt.Errorf("goscip: %s is not a directory", dir)
	}
	mods, err := findModules(root)
	if err != nil {
		return Stats{}, err
	}
	out := newIndexWriter(w, o)
	if err := out.metadata(root); err != nil {
		return out.stats, err
	}
	goroots := newGoroots()
	defer goroots.remove()
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	listed := false
	for _, m := range mods {
		if err := ctx.Err(); err != nil {
			return out.done(start), err
		}
		own := modulePatterns(root, m, mods, patterns)
		if len(own) == 0 {
			continue // none of the packages asked for is in m
		}
		listed = true
		if err := indexModule(ctx, root, m, own, goroots, o, out); err != nil {
			return out.done(start), err
		}
	}
	switch {
	case !listed:
		return out.done(start), fmt.Errorf("goscip: no module under %s holds %s", dir, strings.Join(patterns, " "))
	case out.stats.Modules == 0:
		return out.done(start), fmt.Errorf("goscip: no module could be listed: %s", strings.Join(out.stats.Skipped, "; "))
	}
	return out.done(start), nil
}

// modulePatterns returns the patterns of module m (one of mods, the
// modules under root): a relative pattern names folders from root, so it
// is m's when m holds that folder (the deepest module holding it does),
// made relative to m; a recursive one ("./x/...") also takes in every
// module below its folder, whole, as go list's ./... does a folder's
// packages. Other patterns (import paths) are every module's.
func modulePatterns(root string, m module, mods []module, patterns []string) []string {
	var own []string
	for _, p := range patterns {
		if p != "." && p != ".." && !strings.HasPrefix(p, "./") && !strings.HasPrefix(p, "../") {
			own = append(own, p)
			continue
		}
		base, recursive := strings.CutSuffix(p, "/...")
		if p == "./..." {
			base, recursive = ".", true
		}
		folder := filepath.Join(root, filepath.FromSlash(base))
		if rel, ok := within(m.dir, folder); ok && holder(mods, folder) == m.dir {
			own = append(own, relativePattern(filepath.ToSlash(rel), recursive))
		} else if _, ok := within(folder, m.dir); ok && recursive {
			own = append(own, "./...")
		}
	}
	return own
}

// relativePattern is the go list pattern of the folder rel (relative to
// the module, "." for its own), with its subfolders when recursive.
func relativePattern(rel string, recursive bool) string {
	p := "./" + rel
	if rel == "." {
		p = "."
	}
	if recursive {
		p += "/..."
	}
	return p
}

// holder is the directory of the deepest of mods that holds folder.
func holder(mods []module, folder string) string {
	best := ""
	for _, m := range mods {
		if _, ok := within(m.dir, folder); ok && len(m.dir) > len(best) {
			best = m.dir
		}
	}
	return best
}

// moduleVersion is the version of the indexed modules in their symbols.
func (o Options) moduleVersion() string {
	if o.ModuleVersion == "" {
		return "."
	}
	return o.ModuleVersion
}
