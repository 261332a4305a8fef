package repofiles

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// Bounds of the dependencies in one read_file answer. They are applied
// while the dependencies are gathered: a file's imports are read from its
// first DepsScanBytes, each import is resolved once, and gathering stops at
// the DepsMaxListed-th entry or when the call's time for it runs out.
const (
	DepMaxBytes    = 100 << 10 // content of one dependency
	DepsMaxBytes   = 2 << 20   // content of all of them together
	DepsMaxListed  = 200       // entries listed
	DepsScanBytes  = 256 << 10 // bytes of the file read for its imports
	configMaxBytes = 256 << 10 // bytes of a go.mod or tsconfig.json read to resolve imports
)

// Dependency types.
const (
	depImport     = "import"         // a static import (Go, ES modules, Python)
	depTypeImport = "type-import"    // TypeScript `import type` / `export type … from`
	depRequire    = "require"        // CommonJS require()
	depDynamic    = "dynamic-import" // import()
	depExternal   = "external"       // a package outside the repository: listed, no content
	depUnresolved = "unresolved"     // a relative import that names no file of the repository
)

// dependency is one level-1 import of a file.
type dependency struct {
	Path    string  `json:"path"`
	Type    string  `json:"type"`
	Level   int     `json:"level"`
	Content *string `json:"content,omitempty"`
	Note    string  `json:"note,omitempty"`
}

// ref is an import as written, with how it was referenced.
type ref struct {
	spec, kind string
}

// gathered is what dependencies found: the list, and why it may miss some
// of the file's imports ("" when it misses none).
type gathered struct {
	deps []dependency
	cut  string
}

// gatherer collects the dependencies of the file at from: one entry per
// path (the first reference winning, never the file itself), each loaded
// within the bounds, until the list is full or ctx ends.
type gatherer struct {
	ctx    context.Context
	fsys   fs.FS
	seen   map[string]bool // keys of the entries listed
	deps   []dependency
	loaded int    // bytes of content loaded
	head   string // set when only the head of the file was read for imports
	stop   string // set when gathering stopped early, saying why
}

// dependencies resolves the level-1 imports of the file at p (its content
// data, its language lang) and loads the content of those that are files of
// the repository. Work stops at the bounds above and when ctx ends; what
// was found by then is the answer, with the reason it may be incomplete.
func dependencies(ctx context.Context, fsys fs.FS, p string, data []byte, lang string) gathered {
	g := &gatherer{ctx: ctx, fsys: fsys, seen: map[string]bool{p: true}, deps: []dependency{}}
	if len(data) > DepsScanBytes {
		data = data[:bytes.LastIndexByte(data[:DepsScanBytes], '\n')+1]
		g.head = fmt.Sprintf("imports were looked for in the first %d bytes of the file only", len(data))
	}
	switch lang {
	case "go":
		goDeps(g, p, data)
	case "typescript", "javascript":
		jsDeps(g, p, data)
	case "python":
		pythonDeps(g, p, data)
	}
	var why []string
	for _, s := range []string{g.head, g.stop} {
		if s != "" {
			why = append(why, s)
		}
	}
	return gathered{deps: g.deps, cut: strings.Join(why, "; ")}
}

// more reports whether gathering goes on: nothing stopped it and the call
// still has time.
func (g *gatherer) more() bool {
	if g.stop == "" && g.ctx.Err() != nil {
		g.stop = "the time for this call ran out while imports were resolved: those resolved by then are listed"
	}
	return g.stop == ""
}

// add lists d unless an entry for the same path is listed already, and
// loads its content when it is a file of the repository. It reports
// whether gathering goes on.
func (g *gatherer) add(d dependency) bool {
	key := d.Path
	if d.Type == depExternal || d.Type == depUnresolved {
		key = d.Type + ":" + d.Path
	}
	if g.seen[key] {
		return g.more()
	}
	if len(g.deps) == DepsMaxListed {
		g.stop = fmt.Sprintf("the file has more dependencies than the %d listed", DepsMaxListed)
		return false
	}
	g.seen[key] = true
	d.Level = 1
	if d.Type != depExternal && d.Type != depUnresolved {
		g.load(&d)
	}
	g.deps = append(g.deps, d)
	return g.more()
}

// load reads a dependency's content when the policy allows it and the
// bounds leave room, or says why not in Note.
func (g *gatherer) load(d *dependency) {
	if g.loaded >= DepsMaxBytes {
		d.Note = fmt.Sprintf("content left out: the dependencies already hold %d bytes (limit %d)", g.loaded, DepsMaxBytes)
		return
	}
	f, err := depPolicy.Read(g.fsys, d.Path)
	var te *toolerr.Error
	switch {
	case errors.As(err, &te) && te.Code == toolerr.SizeLimitExceeded:
		d.Note = fmt.Sprintf("content left out: over the %d-byte limit for one dependency", DepMaxBytes)
	case err != nil:
		d.Note = "not read: " + err.Error()
	case g.loaded+len(f.Data) > DepsMaxBytes:
		d.Note = fmt.Sprintf("content left out: the dependencies already hold %d bytes (limit %d)", g.loaded, DepsMaxBytes)
	case !utf8.Valid(f.Data):
		d.Note = "content left out: not UTF-8 text"
	default:
		c := string(f.Data)
		d.Content = &c
		g.loaded += len(f.Data)
	}
}

// readHead reads at most max bytes from the start of the file name: enough
// of a go.mod or tsconfig.json to resolve imports, however large it is.
func readHead(fsys fs.FS, name string, max int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}

// isFile reports whether p is a regular file of fsys (not a link).
func isFile(fsys fs.FS, p string) bool {
	if !fs.ValidPath(p) || p == "." {
		return false
	}
	info, err := fs.Lstat(fsys, p)
	return err == nil && info.Mode().IsRegular()
}

// ---- Go ----

// goDeps resolves imports inside the module whose go.mod is nearest above
// the file: each such import brings every non-test file of its package.
// Each import path is resolved once.
func goDeps(g *gatherer, p string, data []byte) {
	f, err := parser.ParseFile(token.NewFileSet(), p, data, parser.ImportsOnly)
	if f == nil {
		g.add(dependency{Path: p, Type: depUnresolved, Note: "imports could not be parsed: " + fmt.Sprint(err)})
		return
	}
	modDir, modPath := goModule(g.fsys, path.Dir(p))
	done := map[string]bool{}
	for _, imp := range f.Imports {
		ip, err := strconv.Unquote(imp.Path.Value)
		if err != nil || done[ip] {
			continue
		}
		done[ip] = true
		if !g.more() {
			return
		}
		rest, inModule := strings.CutPrefix(ip, modPath)
		if modPath == "" || !inModule || (rest != "" && !strings.HasPrefix(rest, "/")) {
			if !g.add(dependency{Path: ip, Type: depExternal}) {
				return
			}
			continue
		}
		dir := path.Join(modDir, strings.TrimPrefix(rest, "/"))
		files := goFiles(g.fsys, dir)
		if len(files) == 0 && !g.add(dependency{Path: ip, Type: depUnresolved, Note: "no Go files in " + dir}) {
			return
		}
		for _, gf := range files {
			if !g.add(dependency{Path: gf, Type: depImport}) {
				return
			}
		}
	}
}

// goModule finds the nearest go.mod at or above dir and returns its folder
// and module path ("" when there is none).
var moduleLine = regexp.MustCompile(`(?m)^\s*module\s+"?([^\s"]+)"?`)

func goModule(fsys fs.FS, dir string) (string, string) {
	for {
		if data, err := readHead(fsys, path.Join(dir, "go.mod"), configMaxBytes); err == nil {
			if m := moduleLine.FindSubmatch(data); m != nil {
				return dir, string(m[1])
			}
			return dir, ""
		}
		if dir == "." {
			return ".", ""
		}
		dir = path.Dir(dir)
	}
}

// goFiles lists a package folder's Go files, tests left out.
func goFiles(fsys fs.FS, dir string) []string {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			out = append(out, path.Join(dir, n))
		}
	}
	return out
}

// ---- TypeScript and JavaScript ----

var (
	// import/export … from 'x', import 'x', import type … from 'x'.
	esImport   = regexp.MustCompile(`\b(?:import|export)\s+(type\s+)?(?:[\w*{}\s,$]*?\s*from\s*)?["']([^"'\n]+)["']`)
	cjsRequire = regexp.MustCompile(`\brequire\s*\(\s*["']([^"'\n]+)["']\s*\)`)
	dynImport  = regexp.MustCompile(`\bimport\s*\(\s*["']([^"'\n]+)["']\s*\)`)
)

// jsRefs lists a script's imports in order of appearance.
func jsRefs(src string) []ref {
	src = stripComments(src)
	type at struct {
		pos int
		r   ref
	}
	var all []at
	for _, m := range esImport.FindAllStringSubmatchIndex(src, -1) {
		kind := depImport
		if m[2] >= 0 {
			kind = depTypeImport
		}
		all = append(all, at{m[0], ref{src[m[4]:m[5]], kind}})
	}
	for _, m := range cjsRequire.FindAllStringSubmatchIndex(src, -1) {
		all = append(all, at{m[0], ref{src[m[2]:m[3]], depRequire}})
	}
	for _, m := range dynImport.FindAllStringSubmatchIndex(src, -1) {
		all = append(all, at{m[0], ref{src[m[2]:m[3]], depDynamic}})
	}
	slices.SortStableFunc(all, func(a, b at) int { return a.pos - b.pos })
	out := make([]ref, len(all))
	for i, a := range all {
		out[i] = a.r
	}
	return out
}

// stripComments blanks out // and /* */ comments, leaving strings and
// template literals alone (a URL in a string is not a comment).
func stripComments(src string) string {
	b := []byte(src)
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"' || c == '\'' || c == '`':
			for i++; i < len(b) && b[i] != c && (c == '`' || b[i] != '\n'); i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			stop := len(b)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				if b[i] != '\n' {
					b[i] = ' '
				}
			}
			i--
		}
	}
	return string(b)
}

// tsconfig is the part of tsconfig.json that resolves imports.
type tsconfig struct {
	CompilerOptions struct {
		BaseURL string              `json:"baseUrl"`
		Paths   map[string][]string `json:"paths"`
	} `json:"compilerOptions"`
}

// readTSConfig reads the root tsconfig.json (or jsconfig.json), which may
// have comments and trailing commas.
func readTSConfig(fsys fs.FS) (tsconfig, bool) {
	var c tsconfig
	for _, name := range []string{"tsconfig.json", "jsconfig.json"} {
		data, err := readHead(fsys, name, configMaxBytes)
		if err != nil {
			continue
		}
		clean := trailingComma.ReplaceAllString(stripComments(string(data)), "$1")
		if json.Unmarshal([]byte(clean), &c) == nil {
			return c, true
		}
	}
	return c, false
}

var trailingComma = regexp.MustCompile(`,(\s*[}\]])`)

func jsDeps(g *gatherer, p string, data []byte) {
	cfg, hasCfg := readTSConfig(g.fsys)
	done := map[string]bool{}
	for _, r := range jsRefs(string(data)) {
		if done[r.spec] {
			continue
		}
		done[r.spec] = true
		if !g.more() {
			return
		}
		var d dependency
		switch target, ok := resolveJS(g.ctx, g.fsys, cfg, hasCfg, p, r.spec); {
		case ok:
			d = dependency{Path: target, Type: r.kind}
		case isRelative(r.spec):
			d = dependency{Path: r.spec, Type: depUnresolved, Note: "no file of the repository matches"}
		default:
			d = dependency{Path: packageName(r.spec), Type: depExternal}
		}
		if !g.add(d) {
			return
		}
	}
}

// isRelative reports whether an import names a path from the importing
// file ("./x", "../x", ".", "..") rather than a package.
func isRelative(spec string) bool {
	return spec == "." || spec == ".." || strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../")
}

// resolveJS finds the file of the repository that spec, imported by the
// file at p, names: relative to p, or through tsconfig's paths and baseUrl.
func resolveJS(ctx context.Context, fsys fs.FS, cfg tsconfig, hasCfg bool, p, spec string) (string, bool) {
	switch {
	case isRelative(spec):
		return resolveScript(fsys, path.Join(path.Dir(p), spec))
	case hasCfg:
		return resolveTSPaths(ctx, fsys, cfg, spec)
	}
	return "", false
}

// resolveTSPaths applies tsconfig's paths and baseUrl to a bare import,
// until ctx ends.
func resolveTSPaths(ctx context.Context, fsys fs.FS, c tsconfig, spec string) (string, bool) {
	base := c.CompilerOptions.BaseURL
	if base == "" {
		base = "."
	}
	for pattern, targets := range c.CompilerOptions.Paths {
		prefix, suffix, wild := strings.Cut(pattern, "*")
		var star string
		switch {
		case !wild && spec == pattern:
		case wild && strings.HasPrefix(spec, prefix) && strings.HasSuffix(spec, suffix) && len(spec) >= len(prefix)+len(suffix):
			star = spec[len(prefix) : len(spec)-len(suffix)]
		default:
			continue
		}
		for _, t := range targets {
			if ctx.Err() != nil {
				return "", false
			}
			if f, ok := resolveScript(fsys, path.Join(base, strings.Replace(t, "*", star, 1))); ok {
				return f, true
			}
		}
	}
	if c.CompilerOptions.BaseURL != "" {
		return resolveScript(fsys, path.Join(base, spec))
	}
	return "", false
}

var scriptExts = []string{".ts", ".tsx", ".d.ts", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".json"}

// tsSources are the TypeScript sources an import written with a
// JavaScript extension may name (TypeScript's output-extension imports).
var tsSources = map[string][]string{".js": {".ts", ".tsx"}, ".jsx": {".tsx"}, ".mjs": {".mts"}, ".cjs": {".cts"}}

// indexFiles are the files an import of a folder may name.
var indexFiles = []string{"index.ts", "index.tsx", "index.js", "index.jsx", "index.mjs", "index.cjs"}

// resolveScript finds the file an import of base names: base itself, with
// an extension, ".js" written for a ".ts" source, or base/index.*.
func resolveScript(fsys fs.FS, base string) (string, bool) {
	if strings.HasPrefix(base, "../") || base == ".." {
		return "", false // outside the repository
	}
	cands := []string{base}
	ext := path.Ext(base)
	for _, e := range tsSources[ext] {
		cands = append(cands, strings.TrimSuffix(base, ext)+e)
	}
	for _, e := range scriptExts {
		cands = append(cands, base+e)
	}
	for _, f := range indexFiles {
		cands = append(cands, path.Join(base, f))
	}
	for _, c := range cands {
		if isFile(fsys, c) {
			return c, true
		}
	}
	return "", false
}

// packageName is the npm package of a bare import: "lodash/fp" → "lodash",
// "@scope/pkg/x" → "@scope/pkg".
func packageName(spec string) string {
	parts := strings.SplitN(spec, "/", 3)
	if strings.HasPrefix(spec, "@") && len(parts) >= 2 {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// ---- Python ----

var (
	pyImport = regexp.MustCompile(`(?m)^[ \t]*import[ \t]+([\w. \t,]+)`)
	pyFrom   = regexp.MustCompile(`(?m)^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\(?([\w \t,*]*)`)
)

func pythonDeps(g *gatherer, p string, data []byte) {
	done := map[string]bool{}
	for _, r := range pythonImports(string(data)) {
		key := fmt.Sprint(r.level, r.mod, r.names)
		if done[key] {
			continue
		}
		done[key] = true
		if !g.more() {
			return
		}
		if found := r.resolve(g.ctx, g.fsys, p); len(found) > 0 {
			for _, f := range found {
				if !g.add(dependency{Path: f, Type: depImport}) {
					return
				}
			}
			continue
		}
		d := dependency{Path: strings.Split(r.mod, ".")[0], Type: depExternal}
		if r.level > 0 {
			spec := strings.Repeat(".", r.level) + r.mod
			if r.mod == "" && len(r.names) > 0 {
				spec += r.names[0]
			}
			d = dependency{Path: spec, Type: depUnresolved, Note: "no file of the repository matches"}
		}
		if !g.add(d) {
			return
		}
	}
}

// pyRef is one module a Python file imports.
type pyRef struct {
	pos   int
	level int      // leading dots
	mod   string   // dotted module
	names []string // from … import names
}

// pythonImports returns the modules that src imports, in order.
func pythonImports(src string) []pyRef {
	var refs []pyRef
	for _, m := range pyImport.FindAllStringSubmatchIndex(src, -1) {
		for _, part := range strings.Split(src[m[2]:m[3]], ",") {
			if f := strings.Fields(part); len(f) > 0 {
				refs = append(refs, pyRef{pos: m[0], mod: f[0]})
			}
		}
	}
	for _, m := range pyFrom.FindAllStringSubmatchIndex(src, -1) {
		var names []string
		for _, part := range strings.Split(src[m[6]:m[7]], ",") {
			if f := strings.Fields(part); len(f) > 0 && f[0] != "*" {
				names = append(names, f[0])
			}
		}
		refs = append(refs, pyRef{pos: m[0], level: m[3] - m[2], mod: src[m[4]:m[5]], names: names})
	}
	slices.SortStableFunc(refs, func(a, b pyRef) int { return a.pos - b.pos })
	return refs
}

// resolve returns the repository's files that r, imported by the file at
// p, names: the module and any submodules among its names. A relative
// import is looked for from p's package, an absolute one at the root and
// then in src. It stops when ctx ends.
func (r pyRef) resolve(ctx context.Context, fsys fs.FS, p string) []string {
	modPath := strings.ReplaceAll(r.mod, ".", "/")
	roots := []string{".", "src"}
	if r.level > 0 {
		dir := path.Dir(p)
		for range r.level - 1 {
			dir = path.Dir(dir)
		}
		roots = []string{dir}
	}
	var found []string
	for _, root := range roots {
		base := path.Join(root, modPath)
		if f, ok := resolvePython(fsys, base); ok && modPath != "" {
			found = append(found, f)
		}
		for _, n := range r.names { // submodules: from pkg import mod
			if ctx.Err() != nil {
				return found
			}
			if f, ok := resolvePython(fsys, path.Join(base, n)); ok {
				found = append(found, f)
			}
		}
		if len(found) > 0 {
			break
		}
	}
	return found
}

// resolvePython finds base.py or base/__init__.py.
func resolvePython(fsys fs.FS, base string) (string, bool) {
	if strings.HasPrefix(base, "../") || base == ".." || base == "." {
		return "", false
	}
	for _, c := range []string{base + ".py", path.Join(base, "__init__.py")} {
		if isFile(fsys, c) {
			return c, true
		}
	}
	return "", false
}
