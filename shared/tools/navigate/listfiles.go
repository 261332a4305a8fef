package navigate

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/language"
	"github.com/toolshed/toolshed/shared/pathmatch"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

type listInput struct {
	Path     string     `json:"path"`
	Patterns []string   `json:"patterns"`
	Exclude  []string   `json:"exclude"`
	Depth    schema.Int `json:"depth"`
	Limit    schema.Int `json:"limit"`
	Cursor   string     `json:"cursor"`
	Repo     string     `json:"repo"`
	Ref      string     `json:"ref"`
}

// Entry types.
const (
	typeFile   = "file"
	typeFolder = "folder"
)

type entryJSON struct {
	Path     string `json:"path"`
	Type     string `json:"type"`
	Size     *int   `json:"size,omitempty"`     // file: bytes
	Language string `json:"language,omitempty"` // file
	Lines    *int   `json:"lines,omitempty"`    // file
	Files    *int   `json:"files,omitempty"`    // folder: the files below it, at any depth
}

type listOutput struct {
	Path       string      `json:"path"`
	Entries    []entryJSON `json:"entries"`
	Total      int         `json:"total"`
	NextCursor *string     `json:"next_cursor"`
	Message    string      `json:"message,omitempty"`
}

// listing is what list_files found before paging: every entry, sorted by
// path, files carrying their *repo.File.
type listing struct {
	paths   []string
	files   map[string]*repo.File // the file entries
	folders map[string]int        // the folder entries: files below each
}

// listFiles serves list_files.
func (s service) listFiles(ctx context.Context, call toolkit.Call, in listInput) (toolkit.Result, error) {
	dir := folderOf(in.Path)
	sel, err := newSelector(in.Patterns, in.Exclude)
	if err != nil {
		return toolkit.Result{}, err
	}
	snap, files, r, err := s.searchable(ctx, call, in.Repo, in.Ref)
	if err != nil {
		return toolkit.Result{}, err
	}
	pages := s.cursors.Scope(ListFilesTool, call.Tenant, r.Name, in)
	var after string
	if err := pages.Decode(in.Cursor, &after); err != nil {
		return toolkit.Result{}, err
	}
	l, err := collect(ctx, files, dir, sel, int(in.Depth))
	if err != nil {
		return toolkit.Result{}, err
	}
	if len(l.paths) == 0 && in.Cursor == "" {
		if err := missingFolder(snap, files, dir); err != nil {
			return toolkit.Result{}, err
		}
	}
	out := page(l, pages, after, int(in.Limit))
	out.Path = dir
	out.Message = pageMessage(out, sel.globbing())
	return toolkit.Result{Data: out, Message: out.Message}, nil
}

// folderOf is the folder a path argument names: "" for the root (given as
// "", "." or "/"), without a trailing "/".
func folderOf(p string) string {
	p = strings.Trim(p, "/")
	if p == "." {
		return ""
	}
	return p
}

// relative returns p relative to the folder dir ("" for the root), and
// whether p lies below dir.
func relative(dir, p string) (string, bool) {
	if dir == "" {
		return p, true
	}
	return strings.CutPrefix(p, dir+"/")
}

// selector says which files under the listed folder a listing keeps:
// those an include glob matches (all, without any), unless an exclude
// glob matches them or a folder above them. Paths are relative to the
// listed folder.
type selector struct {
	include []pathmatch.FileGlob
	exclude *pathmatch.Set
}

// newSelector checks the globs. An exclude glob without "/" matches a
// name at any depth ("vendor", "*.pb.go"); one with "/" the path from the
// listed folder.
func newSelector(patterns, exclude []string) (selector, error) {
	var sel selector
	for i, p := range patterns {
		g, err := pathmatch.NewFileGlob(p)
		if err != nil {
			return selector{}, toolerr.Field(fmt.Sprintf("patterns/%d", i), "%v", err)
		}
		sel.include = append(sel.include, g)
	}
	anyDepth := make([]string, len(exclude))
	for i, p := range exclude {
		if err := pathmatch.Validate(p); err != nil {
			return selector{}, toolerr.Field(fmt.Sprintf("exclude/%d", i), "%v", err)
		}
		anyDepth[i] = strings.TrimPrefix(p, "./")
		if !strings.Contains(anyDepth[i], "/") {
			anyDepth[i] = "**/" + anyDepth[i]
		}
	}
	set, err := pathmatch.New(anyDepth, pathmatch.CaseSensitive)
	if err != nil {
		return selector{}, toolerr.Field("exclude", "%v", err)
	}
	sel.exclude = set
	return sel, nil
}

// globbing reports whether the listing is a search by globs rather than
// a folder's listing.
func (s selector) globbing() bool { return len(s.include) > 0 }

// keeps reports whether the file at rel (relative to the listed folder)
// is selected.
func (s selector) keeps(rel string) bool {
	if _, excluded := s.exclude.Match(rel); excluded {
		return false
	}
	if !s.globbing() {
		return true
	}
	return slices.ContainsFunc(s.include, func(g pathmatch.FileGlob) bool { return g.Match(rel) })
}

// collect lists the entries under dir ("" for the root): with globs, every
// selected file at any depth; without, the selected files and folders at
// most depth levels below dir, each folder with the selected files below
// it. It stops when ctx ends.
func collect(ctx context.Context, files []*repo.File, dir string, sel selector, depth int) (listing, error) {
	l := listing{files: map[string]*repo.File{}, folders: map[string]int{}}
	for i, f := range files {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return listing{}, err
			}
		}
		rel, below := relative(dir, f.Path)
		if !below || !sel.keeps(rel) {
			continue
		}
		if sel.globbing() || strings.Count(rel, "/") < depth {
			l.files[f.Path] = f
			l.paths = append(l.paths, f.Path)
		}
		if sel.globbing() {
			continue
		}
		// Each folder between dir and the file, down to depth levels.
		for level, at := 1, 0; level <= depth; level++ {
			j := strings.IndexByte(rel[at:], '/')
			if j < 0 {
				break
			}
			at += j
			folder := path.Join(dir, rel[:at])
			if l.folders[folder] == 0 {
				l.paths = append(l.paths, folder)
			}
			l.folders[folder]++
			at++
		}
	}
	slices.Sort(l.paths)
	return l, nil
}

// missingFolder explains an empty listing of dir: a file, a folder with
// no searchable files, or nothing there. It returns nil when dir is the
// root (an empty repository lists nothing) or a folder whose files were
// all filtered out.
func missingFolder(snap repo.View, files []*repo.File, dir string) error {
	if dir == "" {
		return nil
	}
	info, err := fs.Stat(snap, dir)
	switch {
	case err == nil && !info.IsDir():
		return toolerr.Field("path", "%s is a file, not a folder; read it with read_file", dir)
	case err != nil && toolerr.From(err) != nil && toolerr.From(err).Code == toolerr.PathNotAllowed:
		return toolerr.From(err)
	case err != nil:
		return toolerr.New(toolerr.ResourceNotFound, "No folder %s in the repository", dir).With("path", dir)
	}
	if !slices.ContainsFunc(files, func(f *repo.File) bool { return strings.HasPrefix(f.Path, dir+"/") }) {
		return toolerr.New(toolerr.ResourceNotFound,
			"The folder %s holds no file list_files shows (only ignored, hidden or binary files, or none)", dir).With("path", dir)
	}
	return nil
}

// page returns the entries after the path after, at most limit of them,
// with the cursor of the next page (made in pages: its position is the
// last path shown).
func page(l listing, pages cursor.Scope, after string, limit int) listOutput {
	out := listOutput{Entries: []entryJSON{}, Total: len(l.paths)}
	start, _ := slices.BinarySearch(l.paths, after)
	if start < len(l.paths) && l.paths[start] == after {
		start++
	}
	end := min(start+limit, len(l.paths))
	for _, p := range l.paths[start:end] {
		out.Entries = append(out.Entries, l.entry(p))
	}
	if end < len(l.paths) {
		next := pages.Encode(l.paths[end-1])
		out.NextCursor = &next
	}
	return out
}

// entry describes the entry at p.
func (l listing) entry(p string) entryJSON {
	if f, ok := l.files[p]; ok {
		size, lines := f.Size(), f.Lines()
		return entryJSON{Path: p, Type: typeFile, Size: &size, Language: language.Of(p), Lines: &lines}
	}
	n := l.folders[p]
	return entryJSON{Path: p, Type: typeFolder, Files: &n}
}

// pageMessage says what the page holds and how to get the rest.
func pageMessage(out listOutput, globbing bool) string {
	what := "entries"
	if globbing {
		what = "matching files"
	}
	switch {
	case out.Total == 0:
		return "No " + what + " found"
	case out.NextCursor != nil:
		return fmt.Sprintf("Showing %d of %d %s; pass next_cursor as cursor for the next page", len(out.Entries), out.Total, what)
	}
	return fmt.Sprintf("%d %s", len(out.Entries), what)
}
