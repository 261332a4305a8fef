package history

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

type searchInput struct {
	Pattern       string     `json:"pattern"`
	CaseSensitive bool       `json:"caseSensitive"`
	Ref           string     `json:"ref"`
	Path          string     `json:"path"`
	Author        string     `json:"author"`
	Since         string     `json:"since"`
	Until         string     `json:"until"`
	Limit         schema.Int `json:"limit"`
	Cursor        string     `json:"cursor"`
	Repo          string     `json:"repo"`
}

// foundJSON is a commit whose diff matches, with its matching hunks.
type foundJSON struct {
	commitJSON
	Matches []fileJSON `json:"matches"`
}

type searchOutput struct {
	Ref        string      `json:"ref"`
	Commits    []foundJSON `json:"commits"`
	Scanned    int         `json:"scanned"`  // commits searched by this call
	Complete   bool        `json:"complete"` // false: the time ran out first
	NextCursor *string     `json:"next_cursor"`
	Message    string      `json:"message,omitempty"`
}

// maxMatchHunks is how many matching hunks a commit shows.
const maxMatchHunks = 10

// searchCommits serves search_commits: commits, newest first, whose
// added or removed lines match pattern (RE2), each with the hunks that
// do. It searches until it has a page of them or its time is nearly out,
// and the cursor goes on from the next commit either way.
func (s *service) searchCommits(ctx context.Context, call toolkit.Call, in searchInput) (toolkit.Result, error) {
	re, err := compile(in.Pattern, in.CaseSensitive)
	if err != nil {
		return toolkit.Result{}, err
	}
	o, err := s.open(ctx, call, in.Repo, "ref", in.Ref)
	if err != nil {
		return toolkit.Result{}, err
	}
	if in.Path != "" {
		if err := o.checkPath(in.Path); err != nil {
			return toolkit.Result{}, err
		}
	}
	q := githistory.LogQuery{Path: in.Path, Author: in.Author}
	if q.Since, q.Until, err = dates(in.Since, in.Until); err != nil {
		return toolkit.Result{}, err
	}
	pages := s.cursors.Scope(SearchCommitsTool, call.Tenant, o.ref.Name, in)
	if err := pages.Decode(in.Cursor, &q.From, &q.Skip); err != nil {
		return toolkit.Result{}, err
	}
	if q.From == "" {
		if q.From, err = o.revOrHead(ctx, "ref", in.Ref); err != nil {
			return toolkit.Result{}, err
		}
	}
	out := searchOutput{Ref: q.From, Commits: []foundJSON{}}
	gctx, cancel := toolkit.Gathering(ctx)
	defer cancel()
	var failed error
	_, err = o.git.EachPatch(gctx, q, func(p githistory.CommitPatch) bool {
		found, ok, err := o.matches(gctx, p, re)
		if err != nil {
			failed = err
			return false
		}
		if ok {
			out.Commits = append(out.Commits, found)
		}
		out.Scanned++
		return len(out.Commits) < int(in.Limit)
	})
	if err = cmpErr(err, failed); err != nil && gctx.Err() == nil {
		return toolkit.Result{}, fmt.Errorf("search commits: %w", err)
	}
	out.Complete = gctx.Err() == nil
	if len(out.Commits) == int(in.Limit) || !out.Complete {
		next := pages.Encode(q.From, q.Skip+out.Scanned)
		out.NextCursor = &next
	}
	out.Message = searchMessage(out)
	return toolkit.Result{Data: out, Message: fmt.Sprintf("%d commits match of %d searched", len(out.Commits), out.Scanned)}, nil
}

func cmpErr(a, b error) error {
	if b != nil {
		return b
	}
	return a
}

func searchMessage(out searchOutput) string {
	if !out.Complete {
		return fmt.Sprintf("The search stopped at its time limit after %d commits; pass next_cursor as cursor to go on", out.Scanned)
	}
	if len(out.Commits) == 0 {
		return "No commit's added or removed lines match"
	}
	return ""
}

// compile checks the pattern as grep_codebase does (RE2).
func compile(pattern string, caseSensitive bool) (*regexp.Regexp, error) {
	if !caseSensitive {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, toolerr.Field("pattern", "Invalid regex pattern: %v", err).With("pattern", pattern)
	}
	return re, nil
}

// hit is a file of a commit's patch (its index) with its matching hunks.
type hit struct {
	file  int
	hunks []githistory.Hunk
}

// matches returns the commit of p with its hunks whose added or removed
// lines match re, within the view's rules, and whether there are any.
func (o opened) matches(ctx context.Context, p githistory.CommitPatch, re *regexp.Regexp) (foundJSON, bool, error) {
	var hits []hit
	for i, part := range p.Files {
		patch, err := githistory.ParsePatch(part)
		if err != nil {
			return foundJSON{}, false, fmt.Errorf("commit %s: %w", p.Hash, err)
		}
		var hs []githistory.Hunk
		for _, h := range patch.Hunks {
			if changedLineMatches(h, re) {
				hs = append(hs, h)
			}
		}
		if len(hs) > 0 {
			hits = append(hits, hit{i, hs})
		}
	}
	if len(hits) == 0 {
		return foundJSON{}, false, nil
	}
	return o.found(ctx, p, hits)
}

// found is the commit of p with the matching hunks of its files, those
// the view's rules let through, at most maxMatchHunks.
func (o opened) found(ctx context.Context, p githistory.CommitPatch, hits []hit) (foundJSON, bool, error) {
	commits, err := o.git.Log(ctx, githistory.LogQuery{From: p.Hash, NoWalk: true, Max: 1})
	if err != nil || len(commits) != 1 {
		return foundJSON{}, false, fmt.Errorf("read commit %s: %w", p.Hash, err)
	}
	c := commits[0]
	if len(c.Files) != len(p.Files) {
		return foundJSON{}, false, fmt.Errorf("commit %s: %d files in its patch, %d in its stat", p.Hash, len(p.Files), len(c.Files))
	}
	out := foundJSON{commitJSON: o.commitOf(c, 0, false), Matches: []fileJSON{}}
	shown := 0
	for _, h := range hits {
		f := c.Files[h.file]
		if !o.visible(f.Path, f.OldPath) || o.checkContent(f.Path, patchText(githistory.Patch{Hunks: h.hunks})) != nil {
			continue
		}
		hs := h.hunks[:min(len(h.hunks), maxMatchHunks-shown)]
		shown += len(hs)
		m := statOf(f)
		m.Hunks = hunksOf(hs)
		out.Matches = append(out.Matches, m)
		if shown == maxMatchHunks {
			break
		}
	}
	return out, len(out.Matches) > 0, nil
}

// changedLineMatches reports whether an added or removed line of h
// matches re.
func changedLineMatches(h githistory.Hunk, re *regexp.Regexp) bool {
	for _, l := range h.Lines {
		if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && re.MatchString(l[1:]) {
			return true
		}
	}
	return false
}
