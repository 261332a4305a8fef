// Package grep implements grep_codebase: a regular expression
// search over the searchable files of the tenant's repository snapshot
// (repo.Snapshot.Searchable: .gitignore respected, node_modules/, .git/,
// dist/, build/, .next/, .context/, hidden files and binary files
// skipped), in process with shared/textsearch. It reports the same lines
// as `rg --line-number --column --no-heading [-i] --glob …` on the same
// files. With ref, it searches the files of that commit, branch or tag
// instead (githistory.Revisions).
package grep

import (
	"context"
	"fmt"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/pathmatch"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/textsearch"
	"github.com/toolshed/toolshed/shared/wiring"

	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// Tool is the tool's name, as in contracts/.
const Tool = "grep_codebase"

// Family registers grep_codebase. It reads snapshots only.
//
// Memory, measured with make bench-grep: a process holding the 5,000-file
// subset of the Go tree (55 MB of files, a 12 MB zip) and searching it
// peaks at 180 MB (zip, files, lower-cased copies, trigram filters and the
// runtime): about 3.3 times the files. Lambda's CPU grows with memory (one
// vCPU at 1,769 MB, about 1.7 at 3,008 MB) and the search runs a worker
// per vCPU, so 3,008 MB gives grep the two cores it was measured on and
// holds a repository of up to 800 MB of files (about 2.6 GB; five copies
// of the Go tree, 638 MB, need about 2.1 GB). TOOLSHED_REPO_MAX_MB refuses
// a larger one here instead of running out of memory (the deployment's
// limit, config.DefaultRepoMaxMB, is higher). GOMEMLIMIT keeps the Go
// heap under the function's memory.
var Family = family.ReadsHistory(family.Family{ // its ref
	Name:              "grep",
	ReadsRepositories: true,
	Tools:             []string{Tool},
	// ListBucket makes S3 answer a missing pointer 404 (not 403).
	Grants:   []family.Grant{family.Objects(repo.Prefix, "s3:GetObject"), family.List(repo.Prefix)},
	MemoryMB: 3008,
	// 3 GB each: at most ten at once (about 30 GB-seconds a second).
	Concurrency: 10,
	Env:         map[string]string{"GOMEMLIMIT": "2700MiB", config.RepoCacheMB.Name(): "2048", config.RepoMaxMB.Name(): "800"},
	New: func(ctx context.Context, env *wiring.Env) ([]toolkit.Tool, error) {
		src, err := env.Repo(ctx)
		if err != nil {
			return nil, err
		}
		// A deployed function reads the default repository's files, and
		// makes the filters a search skips files with, before its first
		// call.
		env.WarmDefaultRepo("searchable files", func(ctx context.Context, r reposcope.Ref) error {
			snap, err := src.Open(ctx, r)
			if err != nil {
				return err
			}
			files, err := snap.Searchable(ctx)
			if err != nil {
				return err
			}
			textsearch.Prepare(ctx, files)
			return nil
		})
		return Tools(src, env.Revisions()), nil
	},
})

// Tools returns grep_codebase over src, and over other commits' files
// (ref) through revisions.
func Tools(src repo.Source, revisions githistory.Revisions) []toolkit.Tool {
	return []toolkit.Tool{{Name: Tool, Handler: toolkit.Typed(service{src: src, revisions: revisions}.grep)}}
}

type service struct {
	src       repo.Source
	revisions githistory.Revisions
}

type input struct {
	Pattern       string     `json:"pattern"`
	FilePattern   string     `json:"filePattern"`
	CaseSensitive bool       `json:"caseSensitive"`
	Limit         schema.Int `json:"limit"`
	Repo          string     `json:"repo"`
	Ref           string     `json:"ref"`
}

type contextJSON struct {
	Before []string `json:"before"`
	After  []string `json:"after"`
}

type matchJSON struct {
	File    string      `json:"file"`
	Line    int         `json:"line"`
	Column  int         `json:"column"`
	Text    string      `json:"text"`
	Context contextJSON `json:"context"`
}

type output struct {
	Matches       []matchJSON `json:"matches"`
	Pattern       string      `json:"pattern"`
	TotalMatches  int         `json:"totalMatches"`
	HasMore       bool        `json:"hasMore"`
	FilesSearched int         `json:"filesSearched"`
	SearchTime    int64       `json:"searchTime"`
	Incomplete    bool        `json:"incomplete,omitempty"`
	Message       string      `json:"message,omitempty"`
}

func (s service) grep(ctx context.Context, call toolkit.Call, in input) (toolkit.Result, error) {
	started := time.Now()
	q, err := textsearch.Compile(in.Pattern, in.CaseSensitive)
	if err != nil {
		return toolkit.Result{}, toolerr.New(toolerr.InvalidInput, "Invalid regex pattern: %v", err).
			With("pattern", in.Pattern).
			With("errors", []toolerr.FieldError{{Field: "pattern", Message: err.Error()}})
	}
	include, err := fileFilter(in.FilePattern)
	if err != nil {
		return toolkit.Result{}, err
	}
	// What was found when the time ran out is the answer (even if the
	// last window searched ends past the deadline: an answer beats TIMEOUT).
	gctx, cancel := toolkit.Gathering(ctx)
	defer cancel()
	snap, r, err := repo.OpenFor(gctx, s.src, call, in.Repo)
	if err == nil {
		snap, err = s.revisions.At(gctx, snap, r.Name, in.Ref)
	}
	var files []*repo.File
	if err == nil {
		files, err = snap.Searchable(gctx)
	}
	if err != nil && gctx.Err() != nil && ctx.Err() == nil {
		// A large snapshot is still being read (it goes on for the next
		// call): nothing was searched, and the answer says so.
		return toolkit.Result{Data: loading(in.Pattern, started), Message: msgLoading}, nil
	}
	if err != nil {
		return toolkit.Result{}, fmt.Errorf("read the repository: %w", err)
	}
	res := textsearch.Search(gctx, files, q, textsearch.Options{Limit: int(in.Limit), Include: include})
	out := output{
		Matches:       make([]matchJSON, len(res.Matches)),
		Pattern:       in.Pattern,
		TotalMatches:  res.Total,
		HasMore:       res.Total > len(res.Matches) || !res.Complete,
		FilesSearched: res.FilesSearched,
		SearchTime:    time.Since(started).Milliseconds(),
		Incomplete:    !res.Complete,
	}
	for i, m := range res.Matches {
		out.Matches[i] = matchJSON{File: m.File, Line: m.Line, Column: m.Column, Text: m.Text, Context: contextJSON{m.Before, m.After}}
	}
	out.Message = message(in.Pattern, res)
	msg := fmt.Sprintf("Found %d matches in %d files searched", res.Total, res.FilesSearched)
	if res.Total == 0 || !res.Complete {
		msg = out.Message
	}
	return toolkit.Result{Data: out, Message: msg}, nil
}

// msgLoading says that a call came while its repository was being read.
const msgLoading = "The repository is still being read (a large snapshot, loading in the background): nothing was searched yet; call again in a few seconds"

// loading is the answer of a call that came while its repository was
// being read.
func loading(pattern string, started time.Time) output {
	return output{Matches: []matchJSON{}, Pattern: pattern, HasMore: true, SearchTime: time.Since(started).Milliseconds(), Incomplete: true, Message: msgLoading}
}

// message is the output's message: what there is to say about res beyond
// its numbers, or "".
func message(pattern string, res textsearch.Result) string {
	switch {
	case !res.Complete:
		return fmt.Sprintf("The search stopped at its time limit after %d files: totalMatches (%d) and filesSearched are lower bounds, "+
			"narrow the pattern or filePattern for a complete count", res.FilesSearched, res.Total)
	case res.Total == 0:
		return fmt.Sprintf("No matches found for pattern '%s'", pattern)
	case res.Total > len(res.Matches):
		return fmt.Sprintf("Showing the first %d of %d matches; raise limit (up to 100) or narrow the pattern or filePattern", len(res.Matches), res.Total)
	}
	return ""
}

// fileFilter turns filePattern into a path filter (pathmatch.FileGlob:
// as with ripgrep's --glob, a pattern without "/" matches the file name at
// any depth, one with "/" the whole path from the root).
func fileFilter(pattern string) (func(string) bool, error) {
	if pattern == "" {
		return nil, nil
	}
	g, err := pathmatch.NewFileGlob(pattern)
	if err != nil {
		return nil, toolerr.Field("filePattern", "%v", err)
	}
	return g.Match, nil
}
