// Package history implements the tools that read a repository's history
// (shared/githistory): list_commits, get_commit, compare, blame,
// search_commits and list_refs. Locally they read each repository's own
// .git; a snapshot pushed without its history answers RESOURCE_NOT_FOUND
// saying so.
//
// The repository's view applies to the history as to the current files:
// a path the view's policy denies (a .env committed years ago, .git/, the
// server's data directory) is never shown, in a commit's files, a diff,
// a blame or a search, and a file whose content holds a secret has its
// lines withheld. What is withheld is counted (withheld), never named.
//
// Every revision argument goes through githistory.Resolve: one that looks
// like an option is INVALID_INPUT, an unknown one RESOURCE_NOT_FOUND
// naming it. Lists page with shared/cursor; diffs are cut to a byte budget
// a page.
package history

import (
	"context"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/wiring"
)

// Tool names, as in contracts/.
const (
	ListCommitsTool   = "list_commits"
	GetCommitTool     = "get_commit"
	CompareTool       = "compare"
	BlameTool         = "blame"
	SearchCommitsTool = "search_commits"
	ListRefsTool      = "list_refs"
)

// pagingTools are the tools whose answers page.
var pagingTools = []string{ListCommitsTool, GetCommitTool, CompareTool, SearchCommitsTool, ListRefsTool}

// Family registers the history tools. They run the git program over the
// repository's .git (githistory says why git and not a library).
//
// Deployed, they are one function (OneFunction): the tools share one /tmp
// copy of a repository's history, a download of hundreds of MB each cold
// start would otherwise repeat per tool, and one blame cache; and six
// functions would take the stack past CloudFormation's 500 resources.
// Its memory and ephemeral storage hold that history and git working on
// it; the git layer gives it the git program, which the Lambda runtime
// lacks.
var Family = family.ReadsHistory(family.Family{
	Name:              "history",
	OneFunction:       true,
	MemoryMB:          2048,
	ReadsRepositories: true,
	// The repository's snapshot, as every repository tool reads it (and,
	// by ReadsHistory, its pushed history); blames are kept in their own
	// folder, the only one it writes. ListBucket makes S3 answer a
	// missing object 404 (a blame not kept), not 403.
	Grants: []family.Grant{
		family.Objects(repo.Prefix, "s3:GetObject"), family.List(repo.Prefix),
		family.Objects(wiring.BlamesPrefix, "s3:GetObject", "s3:PutObject"), family.List(wiring.BlamesPrefix),
	},
	Tools:    []string{ListCommitsTool, GetCommitTool, CompareTool, BlameTool, SearchCommitsTool, ListRefsTool},
	Settings: []family.Setting{family.Only(wiring.CursorKey, pagingTools...)},
	New: func(ctx context.Context, env *wiring.Env) ([]toolkit.Tool, error) {
		src, err := env.Repo(ctx)
		if err != nil {
			return nil, err
		}
		key, err := env.CursorsFor(pagingTools...)
		if err != nil {
			return nil, err
		}
		stored, err := env.BlameObjects(ctx)
		if err != nil {
			return nil, err
		}
		var store BlameStore // the local server keeps blames in memory only
		if stored != nil {
			store = stored
		}
		return Tools(src, env.Histories(), key, store), nil
	},
})

// Tools returns the history tools over src's repositories, whose
// histories come from histories; cursors signs their pages; blames are
// kept in memory, and in store too when it is not nil.
func Tools(src repo.Source, histories githistory.Histories, cursors cursor.Key, store BlameStore) []toolkit.Tool {
	s := &service{src: src, histories: histories, cursors: cursors, blames: newBlames(blameCacheBytes, store)}
	return []toolkit.Tool{
		{Name: ListCommitsTool, Handler: toolkit.Typed(s.listCommits)},
		{Name: GetCommitTool, Handler: toolkit.Typed(s.getCommit)},
		{Name: CompareTool, Handler: toolkit.Typed(s.compare)},
		{Name: BlameTool, Handler: toolkit.Typed(s.blame)},
		{Name: SearchCommitsTool, Handler: toolkit.Typed(s.searchCommits)},
		{Name: ListRefsTool, Handler: toolkit.Typed(s.listRefs)},
	}
}

type service struct {
	src       repo.Source
	histories githistory.Histories
	cursors   cursor.Key
	blames    *blames
}

// opened is what a call reads: the repository as it resolved, its view,
// its history and the view's rules.
type opened struct {
	ref          reposcope.Ref
	view         repo.View
	git          *githistory.Repo
	checkPath    func(string) error
	checkContent func(string, []byte) error
}

// open opens the repository a call names (arg) and its history, after
// checking the call's revision arguments (revs: field, value, field,
// value...; "" values left out), so that one that looks like an option is
// INVALID_INPUT whatever the repository.
func (s *service) open(ctx context.Context, call toolkit.Call, arg string, revs ...string) (opened, error) {
	for i := 0; i+1 < len(revs); i += 2 {
		if revs[i+1] == "" {
			continue
		}
		if err := githistory.CheckRev(revs[i], revs[i+1]); err != nil {
			return opened{}, err
		}
	}
	view, r, err := repo.OpenFor(ctx, s.src, call, arg)
	if err != nil {
		return opened{}, err
	}
	git, err := s.histories.Open(ctx, view)
	if err != nil {
		return opened{}, githistory.NoHistory(r.Name, err)
	}
	checkPath, checkContent := githistory.Rules(view)
	return opened{ref: r, view: view, git: git, checkPath: checkPath, checkContent: checkContent}, nil
}

// visible reports whether a change's paths may be shown.
func (o opened) visible(path, oldPath string) bool {
	if o.checkPath(path) != nil {
		return false
	}
	return oldPath == "" || o.checkPath(oldPath) == nil
}

// revOrHead resolves rev, or HEAD when it is "".
func (o opened) revOrHead(ctx context.Context, field, rev string) (string, error) {
	if rev == "" {
		rev = "HEAD"
	}
	return o.git.Resolve(ctx, field, rev)
}
