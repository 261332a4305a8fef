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

	"github.com/toolshed/toolshed/shared/toolkit"
)

type readFileInput struct {
	Path        string     `json:"path"`
	IncludeDeps bool       `json:"includeDeps"`
	MaxDepth    schema.Int `json:"maxDepth"`
	StartLine   schema.Int `json:"startLine"` // 0: from the first line
	EndLine     schema.Int `json:"endLine"`   // 0: to the last line
	Repo        string     `json:"repo"`      // "": the default repository
	Ref         string     `json:"ref"`       // "": the files as they are now
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
	snap, r, err := repo.OpenFor(ctx, s.src, call, in.Repo)
	if err == nil {
		snap, err = s.revisions.At(ctx, snap, r.Name, in.Ref)
	}
	if err != nil {
		return toolkit.Result{}, err
	}
	var f read
	if in.StartLine > 0 || in.EndLine > 0 {
		f, err = readRange(ctx, snap, in)
	} else {
		f, err = readWhole(snap, in.Path)
	}
	if err != nil {
		return toolkit.Result{}, err
	}
	p, lang := f.file.Path, language.Of(f.file.Path)
	f.file.Language = lang
	out := readFileOutput{
		File:         f.file,
		Dependencies: []dependency{},
		Metadata: metadataJSON{
			Module:       module(snap, p, f.head, lang),
			Role:         ptr(role(p, lang)),
			LastModified: modified(f.modTime),
		},
	}
	if in.IncludeDeps && in.MaxDepth >= 1 {
		gctx, cancel := toolkit.Gathering(ctx)
		got := dependencies(gctx, snap, p, f.head, lang)
		cancel()
		out.Dependencies, out.DependenciesNote = got.deps, got.cut
	}
	if _, err := s.access.Record(ctx, call.Tenant, p, s.now()); err != nil {
		return toolkit.Result{}, fmt.Errorf("count the read of %s: %w", p, err)
	}
	msg := fmt.Sprintf("Read %s (%d bytes, %d lines)", p, out.File.Size, out.File.Lines)
	if r := out.File.Range; r != nil {
		msg = fmt.Sprintf("Read lines %d-%d of %s (%d lines, %d bytes)", r.StartLine, r.EndLine, p, out.File.Lines, out.File.Size)
		if f.cut {
			msg += fmt.Sprintf("; cut at %d bytes: read on from line %d", FileMaxBytes, r.EndLine+1)
		}
	}
	if in.IncludeDeps && in.MaxDepth >= 1 {
		msg += fmt.Sprintf(" with %d dependencies", len(out.Dependencies))
		if out.DependenciesNote != "" {
			msg += " (" + out.DependenciesNote + ")"
		}
	}
	return toolkit.Result{Data: out, Message: msg}, nil
}

// read is a file as read_file read it: what the answer says of it, its
// first bytes (enough for its module and imports) and when it changed.
type read struct {
	file    fileJSON // Language aside
	head    []byte
	modTime time.Time
	cut     bool // the range stops short of endLine, at FileMaxBytes
}

// headBytes is how much of a file read by range is kept for its module
// and imports: what dependencies scans, and one byte to tell it the file
// goes on.
const headBytes = DepsScanBytes + 1

// readWhole reads the file at p whole: at most FileMaxBytes.
func readWhole(snap repo.View, p string) (read, error) {
	f, err := FilePolicy.Read(snap, p)
	if err != nil {
		return read{}, err
	}
	content, err := text(f.Path, f.Data)
	if err != nil {
		return read{}, err
	}
	file := fileJSON{Path: f.Path, Content: content, Size: len(f.Data), Lines: repo.CountLines(f.Data)}
	return read{file: file, head: f.Data, modTime: f.ModTime}, nil
}

// readRange reads lines in.StartLine to in.EndLine of the file in.Path,
// whatever its size: it streams the file (readPage), and returns at most
// FileMaxBytes of lines. So any line navigation points to can be read, in
// a snapshot's zip entry as in a local file.
func readRange(ctx context.Context, snap repo.View, in readFileInput) (read, error) {
	f, err := FilePolicy.Open(snap, in.Path)
	if err != nil {
		return read{}, err
	}
	defer f.Close()
	pg, err := readPage(ctx, f, f.Path, int(in.StartLine), int(in.EndLine), FileMaxBytes, headBytes)
	if err != nil {
		return read{}, fmt.Errorf("read %s: %w", f.Path, err)
	}
	content, err := text(f.Path, pg.content)
	if err != nil {
		return read{}, err
	}
	file := fileJSON{Path: f.Path, Content: content, Size: int(pg.size), Lines: pg.lines,
		Range: &rangeJSON{StartLine: pg.start, EndLine: pg.end, More: pg.end < pg.lines}}
	return read{file: file, head: pg.head, modTime: f.ModTime, cut: pg.cut}, nil
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
