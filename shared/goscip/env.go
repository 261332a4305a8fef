package goscip

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// goEnv is what go list runs with: no network, no workspace, no
// toolchain switch, no cgo (so no C compiler runs and files that import
// "C" are left out).
var goEnv = []string{"GOPROXY=off", "GOSUMDB=off", "GOWORK=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0"}

// listEnv is the environment of go list: this process's, with goEnv and
// extra in place of any setting of the same name.
func listEnv(extra ...string) []string {
	set := append(append([]string{}, goEnv...), extra...)
	names := map[string]bool{}
	for _, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		names[name] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !names[name] {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}

// listing is where and how go list runs for one module.
type listing struct {
	vars []string
	// withoutVendor is the environment to list again with when listing
	// from the vendor folder fails (vendor/modules.txt disagrees with
	// go.mod: go build would refuse it too), nil when vars does not use
	// it: the module is then indexed as one without a vendor folder.
	withoutVendor []string
	cleanup       func()
}

// listSetup prepares go list for module m: an ordinary module is listed
// in its directory on copies of its go.mod and go.sum (-modfile), so that
// go never writes the repository's, with -mod=vendor when it has a vendor
// folder (vendor/modules.txt: its dependencies are the vendored files, as
// go build would use them), else with -mod=mod (so an incomplete go.sum
// or go.mod does not stop it); the standard library through a temporary
// GOROOT (goroots), which always uses its vendor folders.
func listSetup(root string, m module, goroots *goroots) (dir string, l listing, paths pathMap, err error) {
	paths = pathMap{root: root, module: m.dir}
	if m.std() {
		stdDir := m.dir
		if m.path == cmdModule {
			stdDir = filepath.Dir(m.dir)
		}
		goroot, err := goroots.forStd(stdDir)
		if err != nil {
			return "", listing{}, paths, err
		}
		src := filepath.Join(goroot, "src")
		paths.from, paths.to = src, stdDir
		rel, _ := filepath.Rel(stdDir, m.dir)
		return filepath.Join(src, rel), listing{vars: listEnv("GOROOT="+goroot, "GOFLAGS=")}, paths, nil
	}
	tmp, err := os.MkdirTemp("", "goscip-mod-")
	if err != nil {
		return "", listing{}, paths, fmt.Errorf("goscip: %w", err)
	}
	cleanup := func() { os.RemoveAll(tmp) }
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(m.dir, name))
		if err == nil {
			err = os.WriteFile(filepath.Join(tmp, name), data, 0o600)
		}
		if err != nil && (name == "go.mod" || !os.IsNotExist(err)) {
			cleanup()
			return "", listing{}, paths, fmt.Errorf("goscip: copying %s: %w", name, err)
		}
	}
	modfile := " -modfile=" + filepath.Join(tmp, "go.mod")
	l = listing{vars: listEnv("GOFLAGS=-mod=mod" + modfile), cleanup: cleanup}
	if _, err := os.Stat(filepath.Join(m.dir, "vendor", "modules.txt")); err == nil {
		l.vars, l.withoutVendor = listEnv("GOFLAGS=-mod=vendor"+modfile), l.vars
	}
	return m.dir, l, paths, nil
}

// pathMap turns the file names go list gives into document paths:
// relative to the indexed directory (root), slash-separated, with the
// temporary GOROOT's src (from) read as the tree it stands for (to).
type pathMap struct {
	root     string
	module   string // the directory of the module being indexed
	from, to string
}

// real is the file go list names file, outside any temporary GOROOT.
func (p pathMap) real(file string) string {
	if p.from != "" {
		if rest, ok := strings.CutPrefix(file, p.from+string(filepath.Separator)); ok {
			return filepath.Join(p.to, rest)
		}
	}
	return file
}

// document is the document path of a file, and whether it is inside the
// indexed directory.
func (p pathMap) document(file string) (string, bool) {
	rel, ok := within(p.root, p.real(file))
	return filepath.ToSlash(rel), ok
}

// inModule reports whether files are all in the module being indexed (a
// package outside it, such as one of another module a pattern named, is
// not written with this module).
func (p pathMap) inModule(files []string) bool { return p.inFolder(p.module, files) }

// vendored reports whether files are all in the vendor folder of the
// module being indexed: a package its go build takes from there.
func (p pathMap) vendored(files []string) bool {
	return p.inFolder(filepath.Join(p.module, "vendor"), files)
}

// inFolder reports whether files (as go list names them) are all in dir.
func (p pathMap) inFolder(dir string, files []string) bool {
	for _, f := range files {
		if _, ok := within(dir, p.real(f)); !ok {
			return false
		}
	}
	return len(files) > 0
}

// within is path relative to dir, and whether it is inside dir.
func within(dir, path string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// goroots makes the temporary GOROOTs that standard library trees are
// listed through: go list loads module std only as GOROOT/src. Each has
// src as a symbolic link to the tree; VERSION and go.env (the tree's, else
// the installed Go's) copied; pkg/tool, pkg/include and bin as links to
// the installed Go's.
type goroots struct {
	made map[string]string // tree → its temporary GOROOT
	tmp  []string
}

func newGoroots() *goroots { return &goroots{made: map[string]string{}} }

func (g *goroots) forStd(stdDir string) (string, error) {
	if goroot, ok := g.made[stdDir]; ok {
		return goroot, nil
	}
	real, err := installedGoroot()
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "goscip-goroot-")
	if err != nil {
		return "", fmt.Errorf("goscip: %w", err)
	}
	g.tmp = append(g.tmp, tmp)
	goroot := filepath.Join(tmp, "go")
	if err := makeGoroot(goroot, stdDir, real); err != nil {
		return "", fmt.Errorf("goscip: temporary GOROOT for %s: %w", stdDir, err)
	}
	g.made[stdDir] = goroot
	return goroot, nil
}

func makeGoroot(goroot, stdDir, real string) error {
	if err := os.MkdirAll(filepath.Join(goroot, "pkg"), 0o700); err != nil {
		return err
	}
	links := map[string]string{"src": stdDir, "pkg/tool": filepath.Join(real, "pkg", "tool"),
		"pkg/include": filepath.Join(real, "pkg", "include"), "bin": filepath.Join(real, "bin")}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(goroot, filepath.FromSlash(name))); err != nil {
			return err
		}
	}
	for _, name := range []string{"VERSION", "go.env"} {
		data, err := os.ReadFile(filepath.Join(filepath.Dir(stdDir), name))
		if err != nil {
			data, err = os.ReadFile(filepath.Join(real, name))
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(goroot, name), data, 0o600)
		}
		if err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}

func (g *goroots) remove() {
	for _, tmp := range g.tmp {
		os.RemoveAll(tmp)
	}
}

// installedGoroot is the GOROOT of the go command on PATH.
func installedGoroot() (string, error) {
	cmd := exec.Command("go", "env", "GOROOT")
	cmd.Env = listEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("goscip: go env GOROOT: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
