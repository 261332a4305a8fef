package navigate

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// Precisions, as answers give them.
const (
	precisePrecision = "precise"
	searchPrecision  = "search"
)

// precisionJSON says how an answer (or one file or definition of it) was
// made: precisely, from the index of a commit, or by search, and why.
type precisionJSON struct {
	Precision     string `json:"precision"`
	IndexedCommit string `json:"indexedCommit,omitempty"`
	Reason        string `json:"reason,omitempty"`
}

// precisionOf is the precision of an answer about t.
func precisionOf(t target) precisionJSON {
	if t.symbol == "" {
		return precisionJSON{Precision: searchPrecision, Reason: t.reason}
	}
	return precisionJSON{Precision: precisePrecision, IndexedCommit: t.commit}
}

// lens is what one call sees of a repository: the files the tools read,
// its symbol table, its precise indexes (with the tenant's other
// repositories, for global symbols) and how far their indexing is.
type lens struct {
	ref   reposcope.Ref
	view  repo.View
	files *shown
	table *symbols.State
	set   *precise.Set
	state precise.State
	// others are the tenant's other repositories an answer names,
	// opened when first named.
	src    repo.Source
	tables *symbols.Tables
	others map[string]*otherRepo
	texts  map[*repo.File]*lines // the files whose lines the answer shows
}

// otherRepo is another repository of the tenant: its files and symbol
// table, or nothing when it cannot be read.
type otherRepo struct {
	files *shown
	table *symbols.State
}

// lens opens the repository a call reads (its repo argument) with its
// precise indexes. Its files are read as the answer names them, and its
// symbol table (the enclosing functions) is built only briefly: a cold
// call on a large snapshot answers without it rather than late.
func (s service) lens(ctx context.Context, call toolkit.Call, name string) (*lens, error) {
	view, r, err := repo.OpenFor(ctx, s.src, call, name)
	if err != nil {
		return nil, err
	}
	set, state, err := s.precise(ctx, r, view, call.Repos)
	if err != nil {
		return nil, fmt.Errorf("precise indexes of %s: %w", r, err)
	}
	table := s.tables.For(view).Build(ctx, definitionsWork)
	return &lens{ref: r, view: view, files: newShown(view), table: table, set: set, state: state,
		src: s.src, tables: s.tables, others: map[string]*otherRepo{}, texts: map[*repo.File]*lines{}}, nil
}

// file returns the searchable file at p, or nil.
func (l *lens) file(p string) *repo.File {
	return l.files.file(p)
}

// fileIn returns the file at p of files (in walk order), or nil.
func fileIn(files []*repo.File, p string) *repo.File {
	i, ok := slices.BinarySearchFunc(files, p, func(f *repo.File, p string) int { return repo.WalkOrder(f.Path, p) })
	if !ok {
		return nil
	}
	return files[i]
}

// home reports whether an occurrence's repository is the one the call
// reads.
func (l *lens) home(repoName string) bool { return repoName == "" || repoName == l.ref.Name }

// why returns why answers about f are made by search, or "" when its
// precise index answers for it: a ready index covers it and holds it as
// it is now.
func (l *lens) why(f *repo.File) string {
	doc, ok := l.set.Document(f.Path)
	if !ok {
		if why := l.state.Why(f.Path, false); why != "" {
			return why
		}
		return "the precise index has no document for this file (added since it was indexed, or left out by its indexer)"
	}
	return l.state.Why(f.Path, doc.Changed(f.Hash()))
}

// fallsBack reports whether f is a file of a precise answer that is
// answered by search instead: indexed, but changed since. (A file the
// index lacks is left out: one added since is indexed again soon, and
// one its indexer leaves out, such as a Go file for another system, would
// only add lines that name other symbols.)
func (l *lens) fallsBack(f *repo.File) bool {
	doc, ok := l.set.Document(f.Path)
	return ok && doc.Changed(f.Hash())
}

// commit is the commit of the repository's ready precise index ("" when
// the State names none).
func (l *lens) commit() string {
	for _, p := range l.state.Projects {
		if p.Status == precise.Ready && p.Commit != "" {
			return p.Commit
		}
	}
	return ""
}

// docCommit is the commit of the index that holds path, or the ready
// index's.
func (l *lens) docCommit(path string) string {
	if doc, ok := l.set.Document(path); ok && doc.Commit != "" {
		return doc.Commit
	}
	return l.commit()
}

// source returns the file at (repoName, p) that an answer shows, with the
// symbols its table holds of it (nil when not parsed as it is), or nil
// when the repository does not show that file (denied, ignored, deleted
// since): an index never shows more than the view does.
func (l *lens) source(ctx context.Context, repoName, p string) (*repo.File, *symbols.File) {
	files, table := l.files, l.table
	if !l.home(repoName) {
		o := l.other(ctx, repoName)
		files, table = o.files, o.table
	}
	if files == nil {
		return nil, nil
	}
	f := files.file(p)
	if f == nil || table == nil {
		return f, nil
	}
	parsed := table.File(p)
	if parsed == nil || !parsed.Of(f) {
		return f, nil
	}
	return f, parsed
}

// other opens another repository of the tenant (the Set holds only those
// the caller may read), once per call.
func (l *lens) other(ctx context.Context, name string) *otherRepo {
	if o, ok := l.others[name]; ok {
		return o
	}
	o := &otherRepo{}
	l.others[name] = o
	view, err := l.src.Open(ctx, reposcope.Ref{Tenant: l.ref.Tenant, Name: name})
	if err != nil {
		return o
	}
	o.files = newShown(view)
	o.table = l.tables.For(view).Build(ctx, definitionsWork)
	return o
}

// lines returns the lines of f, indexed once per call.
func (l *lens) lines(f *repo.File) *lines {
	if ls, ok := l.texts[f]; ok {
		return ls
	}
	ls := linesOf(f.Content())
	l.texts[f] = ls
	return ls
}

// repoOf is how an answer names an occurrence's repository: "" for the
// one the call reads.
func (l *lens) repoOf(name string) string {
	if l.home(name) {
		return ""
	}
	return name
}

// describeName is the name answers give a symbol: the index's, or the
// last name in the symbol.
func describeName(info precise.SymbolInfo, symbol string) string {
	return cmp.Or(info.DisplayName, symbolName(symbol))
}
