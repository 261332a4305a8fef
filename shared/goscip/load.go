package goscip

import (
	"context"
	"fmt"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sourcegraph/scip/bindings/go/scip"
	"golang.org/x/mod/modfile"
	modpath "golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/tools/go/packages"
)

// listMode asks go list for metadata only: no syntax, no types.
const listMode = packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps | packages.NeedModule

// stdPackageName is the SCIP package name of the standard library (and of
// cmd), as scip-go names it.
const stdPackageName = "github.com/golang/go/src"

// A unit is one package as go list lists it: a package, or one of its
// test variants ("p [p.test]", "p_test [p.test]", or a dependency of those
// recompiled against them).
type unit struct {
	path, name string
	files      []string         // its Go files (absolute, as go list names them)
	imports    map[string]*unit // by import path as written
	goVersion  string           // its module's go line ("" for the standard library)
	prefix     string           // its SCIP symbols' scheme and package, e.g. "scip-go gomod example.com/m v1.0.0 "
	pkgSymbol  string           // the SCIP symbol of the package itself, e.g. prefix + "`net/http`/"
	emit       bool             // its documents are written
	listErrors int              // the problems go list reported with it
	types      *types.Package   // once checked (step 1)
}

// hasSymbol reports whether the package has a symbol: scip-go gives none
// to unsafe and to packages without files.
func (u *unit) hasSymbol() bool { return u.path != "unsafe" && len(u.files) > 0 }

// byPath finds an import of u by package path (types.Package.Path), which
// differs from the import path for the standard library's vendored
// packages.
func (u *unit) byPath(path string) *unit {
	for _, dep := range u.imports {
		if dep.path == path {
			return dep
		}
	}
	return nil
}

// listUnits lists the packages matching patterns in module m (go list run
// in listDir with env), and everything they import, each after its
// imports.
func listUnits(ctx context.Context, m module, listDir string, env []string, patterns []string, o Options, names symbolNames) ([]*unit, error) {
	cfg := &packages.Config{Context: ctx, Mode: listMode, Dir: listDir, Env: env, Tests: o.Tests}
	roots, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("goscip: listing %s: %w", m.path, err)
	}
	units := map[*packages.Package]*unit{}
	var order []*unit
	sort.Slice(roots, func(i, j int) bool { return roots[i].ID < roots[j].ID })
	packages.Visit(roots, nil, func(p *packages.Package) {
		if isTestMain(p) {
			return
		}
		u := &unit{path: p.PkgPath, name: p.Name, files: p.GoFiles,
			imports: map[string]*unit{}, listErrors: len(p.Errors), prefix: names.prefix(p, m, o)}
		u.pkgSymbol = u.prefix + scip.VerboseSymbolFormatter.FormatDescriptors([]*scip.Descriptor{namespace(u.path)})
		if p.Module != nil {
			u.goVersion = p.Module.GoVersion
		}
		for path, dep := range p.Imports {
			if d := units[dep]; d != nil {
				u.imports[path] = d
			}
		}
		units[p] = u
		order = append(order, u)
	})
	var matched []*unit
	for _, r := range roots {
		if u := units[r]; u != nil {
			matched = append(matched, u)
		}
	}
	markEmitted(matched)
	return order, nil
}

// isTestMain reports whether p is the generated main package of a test
// binary ("p.test"), which has no file of the module.
func isTestMain(p *packages.Package) bool {
	return p.Name == "main" && strings.HasSuffix(p.PkgPath, ".test")
}

// markEmitted chooses the units whose documents are written among
// candidates: for each package path, the variant with the most files
// (with tests, "p [p.test]" holds p's files and its internal tests), so
// that each file is one document, as scip-go does.
func markEmitted(candidates []*unit) {
	best := map[string]*unit{}
	for _, u := range candidates {
		if b := best[u.path]; b == nil || len(u.files) > len(b.files) {
			best[u.path] = u
		}
	}
	for _, u := range best {
		u.emit = true
	}
}

// wholeModule reports whether patterns name every package of a module
// (the default, ./...). Only then are the packages of its vendor folder
// written too, which ./... leaves out: an index of some packages (an
// overlay re-indexing the packages that changed) leaves them to the
// module's whole index.
func wholeModule(patterns []string) bool {
	return len(patterns) == 1 && patterns[0] == "./..."
}

// symbolNames names packages the way scip-go does (its loader's
// normalizePackage).
type symbolNames struct {
	mainPath   string // the indexed module
	stdVersion string // the version the standard library is named by
}

// newSymbolNames is how packages are named while indexing module m: the
// standard library by m's own Go version when m is the standard library,
// else by m's go line (scip-go's default -go-version).
func newSymbolNames(m module) symbolNames {
	n := symbolNames{mainPath: m.path, stdVersion: "go" + m.goVersion}
	if m.std() {
		stdDir := m.dir
		if m.path == cmdModule {
			stdDir = filepath.Dir(m.dir)
		}
		n.stdVersion = stdVersion(stdDir)
	}
	return n
}

// prefix is the scheme and package part of the symbols of package p.
func (n symbolNames) prefix(p *packages.Package, m module, o Options) string {
	name, version := stdPackageName, n.stdVersion
	if p.Module != nil && !m.std() {
		name, version = n.modulePackage(p.Module, o)
	}
	return scip.VerboseSymbolFormatter.FormatSymbol(&scip.Symbol{Scheme: "scip-go",
		Package: &scip.Package{Manager: "gomod", Name: name, Version: version}})
}

// modulePackage is the SCIP package name and version of a module, as
// scip-go's loader makes them: the replacement's if it is replaced (the
// indexed version if that has none); the module path a local
// replacement's go.mod declares; the indexed version for the indexed
// module, "." for another without a version; a pseudo-version's revision;
// no build metadata.
func (n symbolNames) modulePackage(mod *packages.Module, o Options) (name, version string) {
	replaced := mod.Replace != nil
	if replaced {
		mod = mod.Replace
	}
	name, version = mod.Path, mod.Version
	if replaced && version == "" {
		version = o.moduleVersion()
	}
	if strings.HasPrefix(name, ".") && mod.GoMod != "" {
		if data, err := os.ReadFile(mod.GoMod); err == nil {
			if path := modfile.ModulePath(data); path != "" {
				name = path
			}
		}
	}
	if name == "" {
		name = "."
	}
	switch {
	case version == "" && name == n.mainPath:
		version = o.moduleVersion()
	case version == "":
		version = "."
	case modpath.IsPseudoVersion(version):
		if rev, err := modpath.PseudoVersionRev(version); err == nil {
			version = rev
		}
	default:
		version = strings.TrimSuffix(version, semver.Build(version))
	}
	return name, version
}

// namespace is the descriptor of a package.
func namespace(path string) *scip.Descriptor {
	return &scip.Descriptor{Name: path, Suffix: scip.Descriptor_Namespace}
}
