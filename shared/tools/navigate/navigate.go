// Package navigate implements the tools an agent without a checkout finds
// its way around a repository with, over the same repository view and
// access policy as grep_codebase (shared/repo: ignored, hidden, binary,
// denied and data-directory files never appear):
//
//   - list_files: a folder's files and folders to a depth, or the files
//     that match globs, with size, language and line count, in path order,
//     paged with a cursor; with ref, those of a commit, branch or tag
//     (githistory.Revisions).
//   - find_symbols: where a name is defined, or a file's outline, from
//     the symbol table of the view (shared/symbols).
//   - list_repos: the repositories the caller may read (every other tool
//     takes one by name, as repo), with commit, file count and how far
//     the code index and the precise indexes are.
//   - find_references: where an identifier is used, as a whole word and
//     case-sensitively (the lines `rg -w -s` finds), grouped by file with
//     every occurrence's column, comments and strings optionally left out
//     (shared/codespans), paged with a cursor; or, given a position or a
//     SCIP symbol, the occurrences of that one symbol as the compiler sees
//     them, from the repository's precise indexes (shared/precise).
//   - find_definition, find_implementations and find_callers: what is at a
//     position (or a symbol) of a file — its definitions with signature
//     and doc, what implements it and what it implements, who calls it and
//     what it calls — from the precise indexes.
//
// # Precision
//
// Every answer of the position tools says how it was made: "precise",
// with the commit the index was made of, or "search", with the reason
// (precise.State.Why: no indexer for the language, indexing running or
// failed, the file changed since it was indexed), and then the textual
// answer: find_references' whole-word lines, find_symbols' definitions of
// the name. A file changed since indexing falls back for that file only:
// references in the other files stay precise, and the answer names the
// files searched by name instead.
package navigate

import (
	"context"
	"fmt"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/precisebucket"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/wiring"
)

// Tool names, as in contracts/.
const (
	ListFilesTool           = "list_files"
	FindReferencesTool      = "find_references"
	FindDefinitionTool      = "find_definition"
	FindImplementationsTool = "find_implementations"
	FindCallersTool         = "find_callers"
)

// pagingTools are the navigation tools that take a cursor, and page with
// the deployment's key: all but find_definition (a few definitions, never
// a page).
var pagingTools = []string{ListFilesTool, FindReferencesTool, FindSymbolsTool, ListReposTool, FindImplementationsTool, FindCallersTool}

// Family registers the navigation tools. They read snapshots only.
//
// Memory: as grep_codebase, they hold the repository's searchable files
// (the snapshot's zip and its files; see shared/tools/grep); find_references
// searches with grep's trigram filters but, being case-sensitive, never
// makes its folded copies: about 1.8 times the files in all, so 2,048 MB
// holds a repository of up to 800 MB of files (TOOLSHED_REPO_MAX_MB refuses
// a larger one here instead of running out of memory). Each snapshot's
// symbol table (about as many bytes as its files for Go code) counts with
// the snapshot within TOOLSHED_REPO_CACHE_MB: a push, or another tenant's
// repository, lets the least recently used snapshot go with its table.
var Family = family.ReadsHistory(family.Family{ // list_files's ref
	Name:              "navigate",
	ReadsRepositories: true,
	Tools: []string{ListFilesTool, FindReferencesTool, FindSymbolsTool, ListReposTool,
		FindDefinitionTool, FindImplementationsTool, FindCallersTool},
	// ListBucket makes S3 answer a missing pointer 404 (not 403), and lets
	// list_repos list a tenant's repositories. The first function to build
	// a snapshot's symbol table saves it for the others
	// (wiring.SymbolStores). list_repos reads the code indexes' pointers
	// and build records. The precise indexes the indexer converted from
	// what was pushed with each snapshot are read, never written
	// (wiring.PreciseIndexes).
	Grants: []family.Grant{
		family.Objects(repo.Prefix, "s3:GetObject"), family.List(repo.Prefix),
		family.Objects(wiring.SymbolsPrefix, "s3:GetObject", "s3:PutObject"), family.List(wiring.SymbolsPrefix),
		family.Objects(precisebucket.Prefix, "s3:GetObject"), family.List(precisebucket.Prefix),
		family.Objects(indexfile.BucketPrefix, "s3:GetObject").For(ListReposTool),
		family.List(indexfile.BucketPrefix).For(ListReposTool),
	},
	MemoryMB: 2048,
	Env:      map[string]string{"GOMEMLIMIT": "1800MiB", config.RepoMaxMB.Name(): "800"},
	Settings: []family.Setting{family.Only(wiring.CursorKey, pagingTools...)},
	New: func(ctx context.Context, env *wiring.Env) ([]toolkit.Tool, error) {
		src, err := env.Repo(ctx)
		if err != nil {
			return nil, err
		}
		// The process's symbol tables, which context_search's live code
		// indexes take their parses from too.
		tables, err := env.SymbolTables(ctx)
		if err != nil {
			return nil, err
		}
		key, err := env.CursorsFor(pagingTools...)
		if err != nil {
			return nil, err
		}
		indexes, err := env.PreciseIndexes(ctx)
		if err != nil {
			return nil, err
		}
		s := service{src: src, revisions: env.Revisions(), tables: tables, codeIndex: env.RepoIndex, cursors: key, precise: indexes, preciseState: env.PreciseState}
		// A deployed function reads (or builds) the default repository's
		// symbol table in its init, as far as the init lets it (the first
		// calls go on with it).
		env.WarmDefaultRepo("symbol table", func(ctx context.Context, r reposcope.Ref) error {
			view, err := src.Open(ctx, r)
			if err != nil {
				return err
			}
			if p := s.tables.For(view).Build(ctx, 0).Progress; !p.Ready {
				return fmt.Errorf("%d of %d files parsed: %w", p.FilesParsed, p.FilesTotal, ctx.Err())
			}
			return nil
		})
		return s.tools(), nil
	},
}, ListFilesTool)

// Tools returns the navigation tools over src, paging with cursors
// authenticated by key, answering precisely from the indexes indexes
// gives (nil: none, every answer made by search). Their symbol tables are
// never closed: for tests and programs that end; list_repos knows of no
// code or precise index, and list_files of no history (a ref is
// RESOURCE_NOT_FOUND).
func Tools(src repo.Source, key cursor.Key, indexes wiring.PreciseIndexes) []toolkit.Tool {
	if indexes == nil {
		indexes = wiring.NoPreciseIndexes
	}
	return service{src: src, tables: symbols.NewTables(nil, nil), codeIndex: noCodeIndexes, cursors: key, precise: indexes, preciseState: noPreciseIndexes}.tools()
}

func (s service) tools() []toolkit.Tool {
	return []toolkit.Tool{
		{Name: ListFilesTool, Handler: toolkit.Typed(s.listFiles)},
		{Name: FindReferencesTool, Handler: toolkit.Typed(s.findReferences)},
		{Name: FindSymbolsTool, Handler: toolkit.Typed(s.findSymbols)},
		{Name: ListReposTool, Handler: toolkit.Typed(s.listRepos)},
		{Name: FindDefinitionTool, Handler: toolkit.Typed(s.findDefinition)},
		{Name: FindImplementationsTool, Handler: toolkit.Typed(s.findImplementations)},
		{Name: FindCallersTool, Handler: toolkit.Typed(s.findCallers)},
	}
}

// service holds what the tools share: the repositories, the symbol
// table of each view (find_symbols looks names up in it, find_references
// marks definitions with it, the position tools name the function each
// line is in), how far code indexes and precise indexes are (list_repos),
// the precise indexes of each repository and the key of their cursors;
// and the files of other commits (list_files' ref).
type service struct {
	src          repo.Source
	revisions    githistory.Revisions
	tables       *symbols.Tables
	codeIndex    wiring.RepoIndexes
	preciseState func(context.Context, reposcope.Ref) (precise.State, error)
	cursors      cursor.Key
	precise      wiring.PreciseIndexes
}

// searchable opens the repository a call reads (its repo argument, "" for
// the caller's default), at the commit, branch or tag ref ("": the
// current files), and returns its view with the files the tools search,
// and the repository as it resolved (its cursors' scope names it).
func (s service) searchable(ctx context.Context, call toolkit.Call, name, ref string) (repo.View, []*repo.File, reposcope.Ref, error) {
	view, r, err := repo.OpenFor(ctx, s.src, call, name)
	if err == nil {
		view, err = s.revisions.At(ctx, view, r.Name, ref)
	}
	if err != nil {
		return nil, nil, r, err
	}
	files, err := view.Searchable(ctx)
	if err != nil {
		return nil, nil, r, fmt.Errorf("list searchable files: %w", err)
	}
	return view, files, r, nil
}
