package goscip

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
)

// An indexer indexes one module.
type indexer struct {
	fset   *token.FileSet
	sizes  types.Sizes
	paths  pathMap
	out    *indexWriter
	global map[token.Pos]string // the symbols of step 1's declarations, every unit's
	ifaces *interfaces
}

// indexModule indexes module m: lists its packages, checks every unit's
// declarations (step 1), then checks each unit to emit in full and writes
// its documents (step 2).
func indexModule(ctx context.Context, root string, m module, patterns []string, goroots *goroots, o Options, out *indexWriter) error {
	listDir, l, paths, err := listSetup(root, m, goroots)
	if err != nil {
		return err
	}
	if l.cleanup != nil {
		defer l.cleanup()
	}
	units, err := listModule(ctx, m, listDir, l, paths, patterns, o)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rel, _ := filepath.Rel(root, m.dir)
		out.stats.Skipped = append(out.stats.Skipped, filepath.ToSlash(rel)+": "+err.Error())
		return nil
	}
	out.stats.Modules++
	ix := &indexer{fset: token.NewFileSet(), sizes: types.SizesFor("gc", build.Default.GOARCH),
		paths: paths, out: out, global: map[token.Pos]string{}, ifaces: newInterfaces()}
	for _, u := range units {
		if err := ctx.Err(); err != nil {
			return err
		}
		out.stats.ListErrors += min(u.listErrors, 1)
		ix.declarations(u)
	}
	for _, u := range units {
		if !u.emit || !ix.paths.inModule(u.files) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := ix.emit(u); err != nil {
			return err
		}
	}
	return nil
}

// listModule lists module m's units (listUnits), from its vendor folder
// if it has one go list accepts, and marks those of the vendor folder to
// be written too when patterns name the whole module: ./... leaves them
// out, and without their documents a use of one has no definition.
func listModule(ctx context.Context, m module, listDir string, l listing, paths pathMap, patterns []string, o Options) ([]*unit, error) {
	names := newSymbolNames(m)
	units, err := listUnits(ctx, m, listDir, l.vars, patterns, o, names)
	if err != nil && l.withoutVendor != nil && ctx.Err() == nil {
		units, err = listUnits(ctx, m, listDir, l.withoutVendor, patterns, o, names)
	}
	if err != nil || !wholeModule(patterns) {
		return units, err
	}
	var vendored []*unit
	for _, u := range units {
		if paths.vendored(u.files) {
			vendored = append(vendored, u)
		}
	}
	markEmitted(vendored)
	return units, nil
}

// declarations is step 1 for unit u: it names u's declarations, checks
// them without function bodies and keeps the package and the method sets
// of its interfaces; the syntax is dropped.
func (ix *indexer) declarations(u *unit) {
	files := ix.parse(u, 0)
	n := newNamer(u, ix.fset)
	for _, f := range files {
		n.file(f)
	}
	for pos, d := range n.names {
		ix.global[pos] = d.symbol
	}
	conf := ix.config(u, func(error) {}) // the indexed packages' errors are counted in step 2
	conf.IgnoreFuncBodies = true
	conf.DisableUnusedImportCheck = true
	u.types, _ = conf.Check(u.path, ix.fset, files, nil)
	ix.ifaces.add(u.types, ix.lookup(nil))
	ix.forget(files)
}

// emit is step 2 for unit u: it checks u in full against step 1's
// packages and writes u's documents.
func (ix *indexer) emit(u *unit) error {
	files := ix.parse(u, parser.ParseComments)
	defer ix.forget(files)
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{},
		Implicits: map[ast.Node]types.Object{}}
	pkg, _ := ix.config(u, func(error) { ix.out.stats.TypeErrors++ }).Check(u.path, ix.fset, files, info)
	n := newNamer(u, ix.fset)
	for _, f := range files {
		n.file(f)
	}
	p := &emitted{ix: ix, u: u, info: info, names: n.names, files: files}
	p.symbolInfos()
	ix.ifaces.relate(pkg, p)
	ix.out.stats.Packages++
	for i, f := range files {
		if err := p.document(f, i); err != nil {
			return err
		}
	}
	return nil
}

// parse parses u's files (a file that cannot be read is left out; one with
// syntax errors is kept as far as it parsed).
func (ix *indexer) parse(u *unit, mode parser.Mode) []*ast.File {
	var files []*ast.File
	for _, name := range u.files {
		src, err := os.ReadFile(name)
		if err != nil {
			ix.out.stats.TypeErrors++
			continue
		}
		f, _ := parser.ParseFile(ix.fset, name, src, mode|parser.SkipObjectResolution)
		if f != nil {
			files = append(files, f)
		}
	}
	ix.out.stats.Checked++
	return files
}

// forget drops files from the file set: their positions stay unique (the
// set never reuses them) and their line tables are freed.
func (ix *indexer) forget(files []*ast.File) {
	for _, f := range files {
		if tf := ix.fset.File(f.FileStart); tf != nil {
			ix.fset.RemoveFile(tf)
		}
	}
}

// config is the go/types configuration for u: its imports are the units
// step 1 checked; errors go to onError, and checking goes on.
func (ix *indexer) config(u *unit, onError func(error)) *types.Config {
	conf := &types.Config{Importer: unitImporter{u}, Sizes: ix.sizes, Error: onError}
	if u.goVersion != "" {
		conf.GoVersion = "go" + u.goVersion
	}
	return conf
}

// unitImporter imports what step 1 checked.
type unitImporter struct{ u *unit }

func (i unitImporter) Import(path string) (*types.Package, error) {
	if path == "unsafe" {
		return types.Unsafe, nil
	}
	dep := i.u.imports[path]
	if dep == nil || dep.types == nil {
		return nil, fmt.Errorf("%s: %w", path, errNotListed)
	}
	return dep.types, nil
}

var errNotListed = errors.New("package not listed or not checked")

// lookup is the symbol of an object: a local declaration of the unit
// being emitted (names, keyed by step 2's positions) or any unit's from
// step 1. Objects of the universe, labels and package names have none.
func (ix *indexer) lookup(names map[token.Pos]declared) func(types.Object) (string, bool) {
	return func(obj types.Object) (string, bool) {
		switch obj.(type) {
		case *types.PkgName, *types.Label, *types.Builtin, *types.Nil:
			return "", false
		}
		if obj.Pkg() == nil {
			return "", false
		}
		if d, ok := names[obj.Pos()]; ok {
			return d.symbol, true
		}
		s, ok := ix.global[obj.Pos()]
		return s, ok
	}
}
