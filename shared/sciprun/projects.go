// Package sciprun finds what can be indexed precisely in a repository and
// runs the SCIP indexers that do it, each as a separate process held to a
// time, memory and output limit.
//
// Projects walks a repository and returns its projects: Go modules (a
// go.mod; a standard-library tree, module std with its cmd module, is one
// project), TypeScript and JavaScript projects (tsconfig.json,
// jsconfig.json or package.json) and Python projects (pyproject.toml,
// setup.py or setup.cfg). TypeScript, JavaScript and Python files outside
// any such folder belong to a project at the repository's root; Go files
// outside a module belong to none (the go command reads modules only).
// Each file belongs to the nearest project above it of its language, so
// Cover can say for any path which project indexes it, or why none does.
// A vendor folder holds no project's own code, except a Go module's own
// (vendor/modules.txt beside its go.mod): the module's go build takes its
// dependencies from there and the Go emitter writes their documents with
// the module's, so its Go files are the module's project's.
//
// Runner.Run runs one project's indexer: scip-typescript or scip-python
// (npm packages, run with node from the Toolshed installation's
// node_modules, never the repository's) or the Go emitter (a command line
// the caller names: its own binary's index-go subcommand). The indexer
// never runs anything of the repository's: no install scripts, no go
// generate, no network for Go modules (GOPROXY=off), and an environment
// holding nothing of the caller's but PATH (see env.go). How the limits
// are held is in process_linux.go; elsewhere only the time limit and a
// check of the output's size after hold.
package sciprun

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"

	"github.com/toolshed/toolshed/shared/language"
	"github.com/toolshed/toolshed/shared/repo"
)

// Language is what a project's indexer reads.
type Language string

// The languages with an indexer.
const (
	Go         Language = "go"
	TypeScript Language = "typescript" // and JavaScript: scip-typescript reads both
	Python     Language = "python"
)

// Project is a folder of a repository that one indexer run reads.
type Project struct {
	Language Language
	// Root is the project's folder, slash separated and relative to the
	// repository: "." for the repository itself.
	Root string
	// Indexer names the indexer that reads it: goscip, scip-typescript or
	// scip-python.
	Indexer string
	// Config is the file in Root that makes it a project (go.mod,
	// tsconfig.json, jsconfig.json, package.json, pyproject.toml, setup.py,
	// setup.cfg), or "" for the root project of the files outside any.
	Config string
	// Name is the Go module's path ("std" for a standard-library tree) or
	// the Python distribution's name (pyproject.toml, setup.cfg); empty for
	// TypeScript (scip-typescript reads package.json itself) and where no
	// file names one.
	Name string
	// Version is what scip-python stamps its symbols with: the caller sets
	// it to the commit being indexed ("0" when empty).
	Version string
	// Files counts the files the project covers.
	Files int
	// Nested are the roots of the projects of the same language inside
	// Root: their files are theirs, not this project's.
	Nested []string
	// Vendored, for a Go project, are the vendor folders of its modules
	// (its own and, in a standard-library tree, cmd's): their Go files
	// are this project's.
	Vendored []string
	// Packages, for a Go project, are the packages to index, as go list
	// patterns relative to Root ("./net/http"); nil indexes every one.
	// The caller sets them to re-index what changed.
	Packages []string
}

// indexer is one row of the table of indexers.
type indexer struct {
	name      string
	language  Language
	languages []string // the languages (shared/language) of the files it reads
	// configs are the files that make a folder a project, the preferred
	// first (a folder holding tsconfig.json and package.json is read
	// through its tsconfig.json).
	configs []string
	// rootProject says whether files outside any project belong to one at
	// the repository's root.
	rootProject bool
}

// indexers is the table of indexers.
var indexers = []indexer{
	{name: "goscip", language: Go, languages: []string{"go"}, configs: []string{"go.mod"}},
	{name: "scip-typescript", language: TypeScript, languages: []string{"typescript", "javascript"},
		configs: []string{"tsconfig.json", "jsconfig.json", "package.json"}, rootProject: true},
	{name: "scip-python", language: Python, languages: []string{"python"},
		configs: []string{"pyproject.toml", "setup.py", "setup.cfg"}, rootProject: true},
}

// indexerOf returns the indexer of the file at p, or nil.
func indexerOf(p string) *indexer {
	lang := language.Of(p)
	for i := range indexers {
		if slices.Contains(indexers[i].languages, lang) {
			return &indexers[i]
		}
	}
	return nil
}

// indexerFor returns the indexer of lang, or nil.
func indexerFor(lang Language) *indexer {
	for i := range indexers {
		if indexers[i].language == lang {
			return &indexers[i]
		}
	}
	return nil
}

// skippedDirs are the folders no project reaches into, besides those
// search never enters (repo.ExcludedDirs) and hidden ones: testdata (the
// go command never compiles it, and elsewhere it is test data, not the
// project's code) and vendor (other people's code, copied in; but a Go
// module's own is read, see Project.Vendored).
var skippedDirs = []string{"testdata", "vendor"}

// skipReason says why no project reaches into a folder named name, or ""
// when one may. lang is the language of the file asked about, "" for any:
// the go command also ignores folders whose names start with "_".
func skipReason(name string, lang Language) string {
	switch {
	case slices.Contains(repo.ExcludedDirs, name):
		return "search never enters " + name + "/"
	case slices.Contains(skippedDirs, name):
		return name + "/ holds no project's own code"
	case strings.HasPrefix(name, "."):
		return "hidden folder " + name + "/"
	case lang == Go && strings.HasPrefix(name, "_"):
		return "the go command ignores " + name + "/"
	}
	return ""
}

// skippedBetween says why a file in folder dir is outside the project at
// root (dir is root or below it), or "".
func skippedBetween(root, dir string, lang Language) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(dir, root), "/")
	if root == "." {
		rel = dir
	}
	if rel == "." || rel == "" {
		return ""
	}
	for _, name := range strings.Split(rel, "/") {
		if why := skipReason(name, lang); why != "" {
			return why
		}
	}
	return ""
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}

// Covers reports whether the file at p (slash separated, relative to the
// repository) is one the project's indexer reads.
func (p Project) Covers(file string) bool {
	ix := indexerOf(file)
	if ix == nil || ix.language != p.Language || !within(file, p.Root) {
		return false
	}
	if v, ok := p.VendorOf(file); ok {
		return skippedBetween(v, path.Dir(file), p.Language) == ""
	}
	if skippedBetween(p.Root, path.Dir(file), p.Language) != "" {
		return false
	}
	return !slices.ContainsFunc(p.Nested, func(n string) bool { return within(file, n) })
}

// VendorOf returns the vendor folder of p's (Vendored) the file at path
// is in, if any.
func (p Project) VendorOf(file string) (string, bool) {
	i := slices.IndexFunc(p.Vendored, func(v string) bool { return strings.HasPrefix(file, v+"/") })
	if i < 0 {
		return "", false
	}
	return p.Vendored[i], true
}

// ErrNotCovered means no project's indexer reads a file.
var ErrNotCovered = errors.New("no precise index")

// Cover returns the project of projects (as Projects found them) that
// covers the file at p, or an error wrapping ErrNotCovered that says why
// none does, in words an answer can carry.
func Cover(projects []Project, file string) (Project, error) {
	for _, p := range projects {
		if p.Covers(file) {
			return p, nil
		}
	}
	ix := indexerOf(file)
	if ix == nil {
		return Project{}, fmt.Errorf("%w: no SCIP indexer for %s files", ErrNotCovered, language.Of(file))
	}
	if why := skippedBetween(".", path.Dir(file), ix.language); why != "" {
		return Project{}, fmt.Errorf("%w: %s", ErrNotCovered, why)
	}
	if ix.language == Go {
		return Project{}, fmt.Errorf("%w: not in a Go module (no go.mod above it)", ErrNotCovered)
	}
	return Project{}, fmt.Errorf("%w: no %s project covers it", ErrNotCovered, ix.name)
}

// maxEntries bounds the walk: a repository of more files and folders is
// refused (ErrTooManyFiles). Five copies of the Go tree hold about 70,000.
const maxEntries = 2_000_000

// ErrTooManyFiles means a repository holds more than maxEntries files and
// folders.
var ErrTooManyFiles = fmt.Errorf("more than %d files and folders", maxEntries)

// Projects returns the projects of the repository at fsys, sorted by
// language and root, each with the files it covers (a project of no files
// is left out). It reads the configuration files that name a project and
// nothing else; symbolic links are not followed. It stops when ctx ends.
func Projects(ctx context.Context, fsys fs.FS) ([]Project, error) {
	w := walk{configs: map[place]string{}, files: map[place]int{}, vendors: map[string]*vendor{}}
	if err := fs.WalkDir(fsys, ".", w.visit(ctx)); err != nil {
		return nil, fmt.Errorf("sciprun: find projects: %w", err)
	}
	return w.projects(fsys), nil
}

// place is a folder and a language.
type place struct {
	dir  string
	lang Language
}

// walk is what Projects gathers: the project configurations, the number
// of files each folder holds, by language, and the vendor folders beside
// a go.mod, with their Go files.
type walk struct {
	configs map[place]string
	files   map[place]int
	vendors map[string]*vendor
	entries int
}

// vendor is a vendor folder beside a go.mod, as the walk found it.
type vendor struct {
	files   int  // the Go files in it (outside folders the go command ignores)
	modules bool // it holds modules.txt: go build reads it
}

// visit is the WalkDirFunc that gathers them.
func (w *walk) visit(ctx context.Context) fs.WalkDirFunc {
	return func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			return nil // an unreadable folder: its files are no project's
		}
		if w.entries++; w.entries > maxEntries {
			return ErrTooManyFiles
		}
		if w.entries%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if w.moduleVendor(p) {
				w.vendors[p] = &vendor{}
				return nil
			}
			if p != "." && skipReason(d.Name(), "") != "" {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			w.add(p)
		}
		return nil
	}
}

// moduleVendor reports whether the folder at p is the vendor folder of a
// Go module: its go.mod sorts before it, so the walk has recorded it.
func (w *walk) moduleVendor(p string) bool {
	_, ok := w.configs[place{path.Dir(p), Go}]
	return path.Base(p) == "vendor" && ok
}

// addVendored counts the file at p if it is in a module's vendor folder,
// and reports whether it is.
func (w *walk) addVendored(p string) bool {
	var v *vendor
	dir := path.Dir(p)
	for d := dir; d != "." && v == nil; d = path.Dir(d) {
		v = w.vendors[d]
		if v != nil {
			switch {
			case p == d+"/modules.txt":
				v.modules = true
			case language.Of(p) == "go" && skippedBetween(d, dir, Go) == "":
				v.files++
			}
		}
	}
	return v != nil
}

// add counts the file at p, or records it as a project's configuration.
func (w *walk) add(p string) {
	if w.addVendored(p) {
		return
	}
	dir, name := path.Dir(p), path.Base(p)
	for _, ix := range indexers {
		rank := slices.Index(ix.configs, name)
		if rank < 0 || skippedBetween(".", dir, ix.language) != "" {
			continue
		}
		k := place{dir, ix.language}
		if old, ok := w.configs[k]; !ok || rank < slices.Index(ix.configs, old) {
			w.configs[k] = name
		}
	}
	if ix := indexerOf(p); ix != nil && skippedBetween(".", dir, ix.language) == "" {
		w.files[place{dir, ix.language}]++
	}
}

// projects turns what the walk gathered into projects.
func (w *walk) projects(fsys fs.FS) []Project {
	names := w.readConfigs(fsys)
	found := map[place]*Project{}
	for k, n := range w.files {
		root, ok := w.root(k)
		if !ok {
			continue
		}
		w.project(found, root, names).Files += n
	}
	w.addVendors(found, names)
	var out []Project
	for k, p := range found {
		for other := range found {
			if other.lang == k.lang && other.dir != k.dir && within(other.dir, k.dir) {
				if parent, _ := w.root(place{path.Dir(other.dir), k.lang}); parent == k {
					p.Nested = append(p.Nested, other.dir)
				}
			}
		}
		slices.Sort(p.Nested)
		slices.Sort(p.Vendored)
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b Project) int {
		return strings.Compare(string(a.Language)+"\x00"+a.Root, string(b.Language)+"\x00"+b.Root)
	})
	return out
}

// project returns the project at root of found, adding it first if new.
func (w *walk) project(found map[place]*Project, root place, names map[place]string) *Project {
	if found[root] == nil {
		ix := indexerFor(root.lang)
		found[root] = &Project{Language: root.lang, Root: root.dir, Indexer: ix.name, Config: w.configs[root], Name: names[root]}
	}
	return found[root]
}

// addVendors gives each vendor folder the go build reads (modules.txt) to
// the project of its module, with its files. It runs after readConfigs, so
// cmd's vendor folder in a standard-library tree goes to std's project.
func (w *walk) addVendors(found map[place]*Project, names map[place]string) {
	for dir, v := range w.vendors {
		root, ok := w.root(place{path.Dir(dir), Go})
		if !v.modules || v.files == 0 || !ok {
			continue
		}
		p := w.project(found, root, names)
		p.Files += v.files
		p.Vendored = append(p.Vendored, dir)
	}
}

// root returns the project a folder's files of a language belong to: the
// nearest folder at or above it holding a configuration of that language,
// else the repository's root where the indexer takes the files outside any
// project; false when none does.
func (w *walk) root(k place) (place, bool) {
	for dir := k.dir; ; dir = path.Dir(dir) {
		if _, ok := w.configs[place{dir, k.lang}]; ok {
			return place{dir, k.lang}, true
		}
		if dir == "." {
			return place{".", k.lang}, indexerFor(k.lang).rootProject
		}
	}
}

// maxConfigBytes bounds what is read of a configuration file.
const maxConfigBytes = 64 << 10

// readConfigs returns the names the configuration files give their
// projects (Project.Name), and folds a standard-library tree's cmd module
// into its std module: the Go emitter reads both through one GOROOT.
func (w *walk) readConfigs(fsys fs.FS) map[place]string {
	names := map[place]string{}
	for k, config := range w.configs {
		data, err := readHead(fsys, path.Join(k.dir, config))
		if err != nil {
			continue // the project stands; only its name is unknown
		}
		switch config {
		case "go.mod":
			names[k] = modfile.ModulePath(data)
		case "pyproject.toml":
			names[k] = iniValue(data, []string{"[project]", "[tool.poetry]"}, "name")
		case "setup.cfg":
			names[k] = iniValue(data, []string{"[metadata]"}, "name")
		}
	}
	for k, name := range names {
		if name == "cmd" && names[place{path.Dir(k.dir), Go}] == "std" {
			delete(w.configs, k)
			delete(names, k)
		}
	}
	return names
}

// readHead reads the first maxConfigBytes of the file at p.
func readHead(fsys fs.FS, p string) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxConfigBytes))
}

// iniValue returns the value of key in the first of sections that sets it,
// in a TOML or INI file ("name = \"zoo\"" or "name = zoo"), or "".
func iniValue(data []byte, sections []string, key string) string {
	found := map[string]string{}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section = line
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(k) == key && found[section] == "" {
			found[section] = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	for _, s := range sections {
		if found[s] != "" {
			return found[s]
		}
	}
	return ""
}
