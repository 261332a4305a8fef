package goscip

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/mod/modfile"
)

// stdModule is the module path of the standard library's tree (the Go
// source tree's src), and cmdModule that of its commands (src/cmd).
const (
	stdModule = "std"
	cmdModule = "cmd"
)

// A module is one go.mod below the indexed directory.
type module struct {
	dir       string // its directory (absolute)
	path      string // its module path, e.g. github.com/x/y, std, cmd
	goVersion string // its go line, e.g. 1.22
}

// std reports whether m is the standard library's tree or its commands,
// which go list only loads inside a GOROOT.
func (m module) std() bool { return m.path == stdModule || m.path == cmdModule }

// findModules lists the modules under root in path order. It skips the
// folders the go command ignores (vendor, testdata, names starting with .
// or _) and node_modules, whose go.mod files belong to other projects.
func findModules(root string) ([]module, error) {
	var mods []module
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "vendor" || name == "testdata" || name == "node_modules" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "go.mod" || !d.Type().IsRegular() {
			return nil
		}
		m, err := readModule(path)
		if err != nil {
			return err
		}
		mods = append(mods, m)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("goscip: finding modules: %w", err)
	}
	if len(mods) == 0 {
		return nil, fmt.Errorf("goscip: no go.mod in %s", root)
	}
	return mods, nil
}

// readModule reads the module path and go line of a go.mod file.
func readModule(gomod string) (module, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return module{}, fmt.Errorf("goscip: %w", err)
	}
	f, err := modfile.ParseLax(gomod, data, nil)
	if err != nil {
		return module{}, fmt.Errorf("goscip: %w", err)
	}
	if f.Module == nil {
		return module{}, fmt.Errorf("goscip: %s has no module line", gomod)
	}
	m := module{dir: filepath.Dir(gomod), path: f.Module.Mod.Path}
	if f.Go != nil {
		m.goVersion = f.Go.Version
	}
	return m, nil
}

// stdVersion is the Go version a standard library tree at stdDir is named
// by in symbols: the first line of the VERSION file beside it (a release's
// GOROOT has one), else this program's Go version.
func stdVersion(stdDir string) string {
	data, err := os.ReadFile(filepath.Join(filepath.Dir(stdDir), "VERSION"))
	if err == nil {
		if line, _, _ := strings.Cut(string(data), "\n"); strings.HasPrefix(line, "go") {
			return strings.TrimSpace(line)
		}
	}
	return runtime.Version()
}
