package repofiles

import (
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/language"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"

	"github.com/toolshed/toolshed/shared/toolkit"
)

type readFileInput struct {
	Path        string     `json:"path"`
	IncludeDeps bool       `json:"includeDeps"`
	MaxDepth    schema.Int `json:"maxDepth"`
	StartLine   schema.Int `json:"startLine"` // 0: from the first line
	EndLine     schema.Int `json:"endLine"`   // 0: to the last line
	Repo        string     `json:"repo"`      // "": the default repository
}

type fileJSON struct {
	Path     string     `json:"path"`
	Content  string     `json:"content"`
	Size     int        `json:"size"`
	Lines    int        `json:"lines"`
	Language string     `json:"language"`
	Range    *rangeJSON `json:"range,omitempty"`
}

// rangeJSON is the lines of a file content holds, when a range was asked
// for: 1-based, inclusive.
type rangeJSON struct {
	StartLine int  `json:"startLine"`
	EndLine   int  `json:"endLine"`
	More      bool `json:"more"` // lines follow EndLine
}

type metadataJSON struct {
	Module       *string `json:"module"`
	Role         *string `json:"role"`
	LastModified *string `json:"lastModified"`
}

type readFileOutput struct {
	File             fileJSON     `json:"file"`
	Dependencies     []dependency `json:"dependencies"`
	DependenciesNote string       `json:"dependenciesNote,omitempty"`
	Metadata         metadataJSON `json:"metadata"`
}

// readFile serves read_file.
func (s service) readFile(ctx context.Context, call toolkit.Call, in readFileInput) (toolkit.Result, error) {
	snap, err := repo.OpenFor(ctx, s.src, call, in.Repo)
	if err != nil {
		return toolkit.Result{}, err
	}
	f, err := FilePolicy.Read(snap, in.Path)
	if err != nil {
		return toolkit.Result{}, err
	}
	content, err := text(f.Path, f.Data)
	if err != nil {
		return toolkit.Result{}, err
	}
	lang := language.Of(f.Path)
	lines := repo.CountLines(f.Data)
	file := fileJSON{Path: f.Path, Content: content, Size: len(f.Data), Lines: lines, Language: lang}
	if in.StartLine > 0 || in.EndLine > 0 {
		if file.Content, file.Range, err = lineRange(content, lines, int(in.StartLine), int(in.EndLine)); err != nil {
			return toolkit.Result{}, err
		}
	}
	out := readFileOutput{
		File:         file,
		Dependencies: []dependency{},
		Metadata: metadataJSON{
			Module:       module(snap, f.Path, f.Data, lang),
			Role:         ptr(role(f.Path, lang)),
			LastModified: modified(f.ModTime),
		},
	}
	if in.IncludeDeps && in.MaxDepth >= 1 {
		gctx, cancel := toolkit.Gathering(ctx)
		got := dependencies(gctx, snap, f.Path, f.Data, lang)
		cancel()
		out.Dependencies, out.DependenciesNote = got.deps, got.cut
	}
	if _, err := s.access.Record(ctx, call.Tenant, f.Path, s.now()); err != nil {
		return toolkit.Result{}, fmt.Errorf("count the read of %s: %w", f.Path, err)
	}
	msg := fmt.Sprintf("Read %s (%d bytes, %d lines)", f.Path, out.File.Size, out.File.Lines)
	if r := out.File.Range; r != nil {
		msg = fmt.Sprintf("Read lines %d-%d of %s (%d lines, %d bytes)", r.StartLine, r.EndLine, f.Path, out.File.Lines, out.File.Size)
	}
	if in.IncludeDeps && in.MaxDepth >= 1 {
		msg += fmt.Sprintf(" with %d dependencies", len(out.Dependencies))
		if out.DependenciesNote != "" {
			msg += " (" + out.DependenciesNote + ")"
		}
	}
	return toolkit.Result{Data: out, Message: msg}, nil
}

// lineRange cuts lines start to end (1-based, inclusive; 0 for the first
// or the last) out of content, a text of total lines, with each line's
// ending. An end past the last line reads to the last; a start past it, or
// an end before the start, is INVALID_INPUT saying how many lines there are.
func lineRange(content string, total, start, end int) (string, *rangeJSON, error) {
	if start == 0 {
		start = 1
	}
	if end == 0 || end > total {
		end = total
	}
	switch {
	case start > total:
		return "", nil, toolerr.Field("startLine", "is %d, past the end: the file has %d lines", start, total)
	case end < start:
		return "", nil, toolerr.Field("endLine", "is %d, before startLine %d", end, start)
	}
	from := 0
	for range start - 1 {
		from += strings.IndexByte(content[from:], '\n') + 1
	}
	to := from
	for range end - start + 1 {
		i := strings.IndexByte(content[to:], '\n')
		if i < 0 {
			to = len(content)
			break
		}
		to += i + 1
	}
	return content[from:to], &rangeJSON{StartLine: start, EndLine: end, More: end < total}, nil
}

func ptr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func modified(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	return ptr(t.UTC().Format(time.RFC3339))
}

// role says what a file is for: test, docs, config, build, script, core
// (source code) or other.
func role(p, lang string) string {
	base := strings.ToLower(path.Base(p))
	segs := strings.Split(strings.ToLower(p), "/")
	dirs := segs[:len(segs)-1]
	inDir := func(names ...string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return slices.Contains(names, d) })
	}
	stem := strings.TrimSuffix(base, path.Ext(base))
	switch {
	case strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec") ||
		(lang == "python" && strings.HasPrefix(base, "test_")) || inDir("test", "tests", "__tests__", "testdata", "spec"):
		return "test"
	case lang == "markdown" || lang == "restructuredtext" || inDir("docs", "doc") ||
		slices.Contains([]string{"readme", "changelog", "license", "contributing"}, stem):
		return "docs"
	case lang == "makefile" || lang == "dockerfile" || base == "go.sum" || base == "package-lock.json" ||
		inDir(".github", ".ci", "ci") || strings.HasSuffix(base, ".lock"):
		return "build"
	case lang == "json" || lang == "yaml" || lang == "toml" || lang == "ini" || lang == "go-module" ||
		strings.Contains(base, ".config.") || strings.HasPrefix(base, ".") || base == "tsconfig.json":
		return "config"
	case lang == "shell" || inDir("scripts", "bin"):
		return "script"
	case language.IsCode(lang):
		return "core"
	}
	return "other"
}

// layerDirs are folders under src/ that group modules rather than being
// one (src/server/auth/x.ts belongs to "auth").
var layerDirs = []string{"server", "client", "app", "lib", "main", "shared", "common", "modules", "packages"}

// module names the module a file belongs to: for Go the package it
// declares; for Python its package (the folder, when it has __init__.py);
// under src/ the top folder, past layer folders such as server/ or client/
// (src/server/auth/AuthService.ts → "auth"); otherwise the top folder.
// Files at the root have none.
func module(fsys fs.FS, p string, data []byte, lang string) *string {
	dir := path.Dir(p)
	switch lang {
	case "go":
		if f, err := parser.ParseFile(token.NewFileSet(), p, data, parser.PackageClauseOnly); err == nil {
			return ptr(f.Name.Name)
		}
	case "python":
		if dir != "." {
			if _, err := fs.Stat(fsys, path.Join(dir, "__init__.py")); err == nil {
				return ptr(path.Base(dir))
			}
		}
	}
	segs := strings.Split(p, "/")
	dirs := segs[:len(segs)-1]
	if len(dirs) == 0 {
		return nil
	}
	if dirs[0] == "src" {
		dirs = dirs[1:]
		for len(dirs) > 1 && slices.Contains(layerDirs, dirs[0]) {
			dirs = dirs[1:]
		}
		if len(dirs) == 0 {
			return ptr("src")
		}
	}
	return ptr(dirs[0])
}
