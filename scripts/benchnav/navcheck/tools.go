package navcheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/testenv/precisetest"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/navigate"
)

// Tools answers with the navigation tools, as an agent asks them:
// find_definition and find_references at a position (every page). An
// answer made by search (no precise index answers there), or a call the
// tool refused (a position in a file the tools do not read), is no
// precise answer: it counts as none, and Search says why, and how often.
type Tools struct {
	// Call calls a tool and returns its result, or an error when the
	// call or the tool failed (*Refused when the tool refused the call):
	// a server's /v1, or Serve's pipeline.
	Call func(tool string, args map[string]any) (json.RawMessage, error)

	mu     sync.Mutex
	search map[string]int
}

// Serve serves the navigation tools over dir (a live local view, as the
// local server's) with indexes as its repository's precise indexes,
// through the pipeline a server runs every call through (input and
// output validated against the contracts, the envelope), and asks them.
// The local server does not make precise indexes yet: this is the one
// way to ask the tools over a precise index outside their own tests.
func Serve(tb testing.TB, dir string, indexes ...precisetest.Index) *Tools {
	tb.Helper()
	repos := precisetest.Repos{"default": indexes}
	h := tooltest.New(tb, tooltest.BoltStores(tb), navigate.Tools(repotest.Local(tb, dir), cursor.RandomKey(), repos.Indexes))
	return &Tools{Call: func(tool string, args map[string]any) (json.RawMessage, error) {
		raw, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		o := h.Call("navcheck", tool, string(raw))
		switch {
		case !o.OK && o.Error.Code == toolerr.InvalidInput:
			return nil, &Refused{Code: string(o.Error.Code), Message: o.Error.Message}
		case !o.OK:
			return nil, fmt.Errorf("%s %s: %s: %s", tool, raw, o.Error.Code, o.Error.Message)
		}
		return o.Result, nil
	}}
}

// Refused is a tool's refusal of a call's input (INVALID_INPUT): its
// error code and message.
type Refused struct{ Code, Message string }

func (r *Refused) Error() string { return r.Code + ": " + r.Message }

// call calls a tool at a position; a refusal is counted, as an answer by
// search is, and gives no result and no error.
func (t *Tools) call(tool string, at Location, args map[string]any) (json.RawMessage, error) {
	result, err := t.Call(tool, args)
	var refused *Refused
	if errors.As(err, &refused) {
		// One count for every file refused for the same reason.
		t.precise("", refused.Code+": "+strings.ReplaceAll(refused.Message, at.Path, "<path>"))
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", tool, at, err)
	}
	return result, nil
}

// Search counts the answers made by search, by their reason.
func (t *Tools) Search() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]int{}
	for k, v := range t.search {
		out[k] = v
	}
	return out
}

// precise reports whether an answer is precise, counting it when not.
func (t *Tools) precise(precision, reason string) bool {
	if precision == "precise" {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.search == nil {
		t.search = map[string]int{}
	}
	t.search[reason]++
	return false
}

// Definitions asks find_definition at the position.
func (t *Tools) Definitions(_ context.Context, at Location) ([]Location, error) {
	result, err := t.call("find_definition", at, map[string]any{"path": at.Path, "line": at.Line, "column": at.Column, "limit": 100})
	if result == nil {
		return nil, err
	}
	var answer struct {
		Precision, Reason string
		Definitions       []struct {
			Location
			Precision string // "search": its file changed since it was indexed
		}
	}
	if err := json.Unmarshal(result, &answer); err != nil {
		return nil, fmt.Errorf("find_definition's answer: %w", err)
	}
	if !t.precise(answer.Precision, answer.Reason) {
		return nil, nil
	}
	var defs []Location
	for _, d := range answer.Definitions {
		// Defined outside the indexed code (no path), or found by name.
		if d.Path != "" && d.Precision != "search" {
			defs = append(defs, d.Location)
		}
	}
	return defs, nil
}

// References asks find_references at the position, every page, its
// declaration left out (the default).
func (t *Tools) References(_ context.Context, at Location) ([]Location, error) {
	var refs []Location
	args := map[string]any{"path": at.Path, "line": at.Line, "column": at.Column, "limit": 500}
	for {
		result, err := t.call("find_references", at, args)
		if result == nil {
			return nil, err
		}
		var page referencesPage
		if err := json.Unmarshal(result, &page); err != nil {
			return nil, fmt.Errorf("find_references' answer: %w", err)
		}
		if !t.precise(page.Precision, page.Reason) {
			return nil, nil
		}
		refs = append(refs, page.references()...)
		if page.NextCursor == nil {
			return refs, nil
		}
		args["cursor"] = *page.NextCursor
	}
}

// referencesPage is a page of find_references' answer.
type referencesPage struct {
	Precision, Reason string
	Files             []struct {
		Path      string
		Precision string // "search" on a file changed since it was indexed
		Lines     []struct {
			Line    int
			Columns []int
			Roles   []string
		}
	}
	NextCursor *string `json:"next_cursor"`
}

// references are the page's references: the occurrences that are not
// definitions, in files answered precisely.
func (p referencesPage) references() []Location {
	var refs []Location
	for _, f := range p.Files {
		if f.Precision == "search" {
			continue
		}
		for _, l := range f.Lines {
			for i, c := range l.Columns {
				if i < len(l.Roles) && l.Roles[i] == "definition" {
					continue
				}
				refs = append(refs, Location{Path: f.Path, Line: l.Line, Column: c})
			}
		}
	}
	return refs
}
