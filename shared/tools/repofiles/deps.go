package repofiles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Bounds of the dependencies in one read_file answer.
const (
	DepMaxBytes   = 100 << 10 // content of one dependency
	DepsMaxBytes  = 2 << 20   // content of all of them together
	DepsMaxListed = 200       // entries listed
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

// dependencies resolves the level-1 imports of a file and loads the
// content of those that are files of the repository, within the bounds.
func dependencies(fsys fs.FS, p string, data []byte, lang string) []dependency {
	var deps []dependency
	switch lang {
	case "go":
		deps = goDeps(fsys, p, data)
	case "typescript", "javascript":
		deps = jsDeps(fsys, p, data)
	case "python":
		deps = pythonDeps(fsys, p, data)
	default:
		return []dependency{}
	}
	// One entry per path, the first reference winning; never the file itself.
	seen := map[string]bool{p: true}
	out := make([]dependency, 0, len(deps))
	total := 0
	for _, d := range deps {
		key := d.Path
		if d.Type == depExternal || d.Type == depUnresolved {
			key = d.Type + ":" + d.Path
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		if len(out) == DepsMaxListed {
			break
		}
		d.Level = 1
		if d.Type != depExternal && d.Type != depUnresolved {
			total = load(fsys, &d, total)
		}
		out = append(out, d)
	}
	return out
}

// load reads a dependency's content when the policy allows it and the
// bounds leave room, or says why not in Note. It returns the new total.
func load(fsys fs.FS, d *dependency, total int) int {
	f, err := FilePolicy.Read(fsys, d.Path)
	switch {
	case err != nil:
		d.Note = "not read: " + err.Error()
	case len(f.Data) > DepMaxBytes:
		d.Note = fmt.Sprintf("content left out: %d bytes, over the %d-byte limit for one dependency", len(f.Data), DepMaxBytes)
	case total+len(f.Data) > DepsMaxBytes:
		d.Note = fmt.Sprintf("content left out: the dependencies already hold %d bytes (limit %d)", total, DepsMaxBytes)
	case !utf8.Valid(f.Data):
		d.Note = "content left out: not UTF-8 text"
	default:
		c := string(f.Data)
		d.Content = &c
		return total + len(f.Data)
	}
	return total
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
func goDeps(fsys fs.FS, p string, data []byte) []dependency {
	f, err := parser.ParseFile(token.NewFileSet(), p, data, parser.ImportsOnly)
	if f == nil {
		return []dependency{{Path: p, Type: depUnresolved, Note: "imports could not be parsed: " + fmt.Sprint(err)}}
	}
	modDir, modPath := goModule(fsys, path.Dir(p))
	var out []dependency
	for _, imp := range f.Imports {
		ip, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		rest, inModule := strings.CutPrefix(ip, modPath)
		if modPath == "" || !inModule || (rest != "" && !strings.HasPrefix(rest, "/")) {
			out = append(out, dependency{Path: ip, Type: depExternal})
			continue
		}
		dir := path.Join(modDir, strings.TrimPrefix(rest, "/"))
		files := goFiles(fsys, dir)
		if len(files) == 0 {
			out = append(out, dependency{Path: ip, Type: depUnresolved, Note: "no Go files in " + dir})
		}
		for _, gf := range files {
			out = append(out, dependency{Path: gf, Type: depImport})
		}
	}
	return out
}

// goModule finds the nearest go.mod at or above dir and returns its folder
// and module path ("" when there is none).
var moduleLine = regexp.MustCompile(`(?m)^\s*module\s+"?([^\s"]+)"?`)

func goModule(fsys fs.FS, dir string) (string, string) {
	for {
		if data, err := fs.ReadFile(fsys, path.Join(dir, "go.mod")); err == nil {
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
		data, err := fs.ReadFile(fsys, name)
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

func jsDeps(fsys fs.FS, p string, data []byte) []dependency {
	cfg, hasCfg := readTSConfig(fsys)
	var out []dependency
	for _, r := range jsRefs(string(data)) {
		target, ok := "", false
		switch {
		case r.spec == "." || r.spec == ".." || strings.HasPrefix(r.spec, "./") || strings.HasPrefix(r.spec, "../"):
			target, ok = resolveScript(fsys, path.Join(path.Dir(p), r.spec))
			if !ok {
				out = append(out, dependency{Path: r.spec, Type: depUnresolved, Note: "no file of the repository matches"})
				continue
			}
		case hasCfg:
			target, ok = resolveTSPaths(fsys, cfg, r.spec)
		}
		if !ok {
			out = append(out, dependency{Path: packageName(r.spec), Type: depExternal})
			continue
		}
		out = append(out, dependency{Path: target, Type: r.kind})
	}
	return out
}

// resolveTSPaths applies tsconfig's paths and baseUrl to a bare import.
func resolveTSPaths(fsys fs.FS, c tsconfig, spec string) (string, bool) {
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

func pythonDeps(fsys fs.FS, p string, data []byte) []dependency {
	var out []dependency
	for _, r := range pythonImports(string(data)) {
		if found := r.resolve(fsys, p); len(found) > 0 {
			for _, f := range found {
				out = append(out, dependency{Path: f, Type: depImport})
			}
			continue
		}
		if r.level > 0 {
			spec := strings.Repeat(".", r.level) + r.mod
			if r.mod == "" && len(r.names) > 0 {
				spec += r.names[0]
			}
			out = append(out, dependency{Path: spec, Type: depUnresolved, Note: "no file of the repository matches"})
		} else {
			out = append(out, dependency{Path: strings.Split(r.mod, ".")[0], Type: depExternal})
		}
	}
	return out
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
// then in src.
func (r pyRef) resolve(fsys fs.FS, p string) []string {
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
