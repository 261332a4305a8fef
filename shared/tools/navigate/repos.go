package navigate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/wiring"
)

// ListReposTool is list_repos' name, as in contracts/.
const ListReposTool = "list_repos"

type reposInput struct {
	Limit  schema.Int `json:"limit"`
	Cursor string     `json:"cursor"`
}

type repoJSON struct {
	Name    string        `json:"name"`
	Default bool          `json:"default"`
	Commit  string        `json:"commit"`
	Files   int           `json:"files"`
	Index   indexJSON     `json:"index"`
	Precise []preciseJSON `json:"precise"`
}

// preciseJSON is how far the precise index of one of a repository's
// projects is (see precise.ProjectState).
type preciseJSON struct {
	Language string         `json:"language"`
	Root     string         `json:"root,omitempty"`
	Status   precise.Status `json:"status"`
	Reason   string         `json:"reason,omitempty"`
	Commit   string         `json:"commit,omitempty"`
}

// indexJSON is how far a repository's code index (context_search's) is.
type indexJSON struct {
	State        contextindex.State `json:"state"`
	Commit       string             `json:"commit,omitempty"`
	FilesIndexed int                `json:"filesIndexed"`
	FilesTotal   int                `json:"filesTotal"`
}

type reposOutput struct {
	Repos      []repoJSON `json:"repos"`
	Total      int        `json:"total"`
	NextCursor *string    `json:"next_cursor"`
	Message    string     `json:"message"`
}

// listRepos serves list_repos: the repositories the caller may read, by
// name, a page at a time. Its cursor's position is the last name shown.
func (s service) listRepos(ctx context.Context, call toolkit.Call, in reposInput) (toolkit.Result, error) {
	pages := s.cursors.Scope(ListReposTool, call.Tenant, "", in) // a listing of repositories, not of one
	var after string
	if err := pages.Decode(in.Cursor, &after); err != nil {
		return toolkit.Result{}, err
	}
	all, err := s.src.List(ctx, call.Tenant)
	if err != nil {
		return toolkit.Result{}, fmt.Errorf("list repositories: %w", err)
	}
	visible := slices.DeleteFunc(all, func(l repo.Listing) bool { return !reposcope.Allows(call.Repos, l.Name) })
	start, _ := slices.BinarySearchFunc(visible, after, func(l repo.Listing, name string) int { return strings.Compare(l.Name, name) })
	if start < len(visible) && visible[start].Name == after {
		start++
	}
	end := min(start+int(in.Limit), len(visible))
	def := reposcope.DefaultFor(call.Repos, s.src.Default())
	out := reposOutput{Repos: []repoJSON{}, Total: len(visible)}
	for _, l := range visible[start:end] {
		r, err := s.listing(ctx, l)
		if err != nil {
			return toolkit.Result{}, err
		}
		r.Default = l.Name == def
		out.Repos = append(out.Repos, r)
	}
	if end < len(visible) {
		next := pages.Encode(visible[end-1].Name)
		out.NextCursor = &next
	}
	switch {
	case out.Total == 0:
		out.Message = fmt.Sprintf("No repositories: publish one with `go run ./scripts/snapshot push -tenant %s [-repo NAME]` from its checkout", call.Tenant)
	case out.NextCursor != nil:
		out.Message = fmt.Sprintf("Showing %d of %d repositories; pass next_cursor as cursor for the next page", len(out.Repos), out.Total)
	default:
		out.Message = fmt.Sprintf("%d repositories; pass a name as repo to the repository tools (without it they read the default one)", out.Total)
	}
	return toolkit.Result{Data: out, Message: out.Message}, nil
}

// listing is what list_repos says of the repository l: with how far its
// code index and its precise indexes are.
func (s service) listing(ctx context.Context, l repo.Listing) (repoJSON, error) {
	ix, err := s.codeIndex(ctx, l.Read)
	if err != nil {
		return repoJSON{}, fmt.Errorf("the code index of %s: %w", l.Name, err)
	}
	st, err := s.preciseState(ctx, l.Read)
	if err != nil {
		return repoJSON{}, fmt.Errorf("the precise indexes of %s: %w", l.Name, err)
	}
	r := repoJSON{Name: l.Name, Commit: l.Commit, Files: l.Files, Precise: []preciseJSON{},
		Index: indexJSON{State: ix.State, Commit: ix.Commit, FilesIndexed: ix.FilesIndexed, FilesTotal: ix.FilesTotal}}
	for _, p := range st.Projects {
		r.Precise = append(r.Precise, preciseJSON{Language: p.Language, Root: p.Root, Status: p.Status, Reason: p.Reason, Commit: p.Commit})
	}
	return r, nil
}

// noPreciseIndexes answers every repository's precise indexes as none (a
// service built without an Env).
func noPreciseIndexes(context.Context, reposcope.Ref) (precise.State, error) {
	return precise.State{}, nil
}

// noCodeIndexes answers every repository's code index as none (a service
// built without an Env: tests and programs).
func noCodeIndexes(context.Context, reposcope.Ref) (wiring.RepoIndex, error) {
	return wiring.RepoIndex{State: wiring.RepoIndexNone}, nil
}
