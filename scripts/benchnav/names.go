package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolshed/toolshed/scripts/benchnav/navcheck"
	"github.com/toolshed/toolshed/shared/testenv/latency"
	"github.com/toolshed/toolshed/shared/testenv/localrun"
)

// nameRows prints, for each ambiguous name, the textual answer
// (find_references by name over /v1, every page, Go files only and tests
// left out) next to the precise answer for the name's most used
// definition (its references asked at its declaration, of nav: the
// tools over the precise index): their sizes, the
// share of the textual answer that is a use of that definition, the
// precise answers' precision and recall against go/types over every
// definition of the name, and the p50 of each whole answer.
func nameRows(ctx context.Context, srv *localrun.Server, truth *navcheck.Truth, nav navcheck.Navigator, r *navcheck.Result, runs int) error {
	fmt.Printf("\n%-8s %5s %10s %8s %9s  %-44s %6s %10s %7s %9s %9s %9s %9s\n", "name", "defs", "text_lines", "text_KB",
		"text_prec", "most used definition", "uses", "prec_lines", "ratio", "precision", "recall", "text_p50", "prec_p50")
	for _, name := range ambiguous {
		top, defs := mostUsed(truth, name)
		text, err := textual(srv, name, runs)
		if err != nil {
			return fmt.Errorf("find_references %s: %w", name, err)
		}
		var refs []navcheck.Location
		var times []time.Duration
		for range runs {
			start := time.Now()
			refs, err = nav.References(ctx, top.At)
			times = append(times, time.Since(start))
			if err != nil {
				return err
			}
		}
		uses := map[navcheck.Location]bool{}
		for _, u := range top.Uses {
			uses[u] = true
		}
		hits := 0
		for _, o := range text.occurrences {
			if uses[o] {
				hits++
			}
		}
		preciseLines := lines(truth, refs)
		g := r.Groups[name]
		fmt.Printf("%-8s %5d %10d %8.1f %9.4f  %-44.44s %6d %10d %6.1fx %9.4f %9.4f %9s %9s\n", name, defs, text.lines,
			float64(text.bytes)/1024, float64(hits)/float64(max(1, len(text.occurrences))), top.Name, len(top.Uses),
			preciseLines, float64(text.lines)/float64(max(1, preciseLines)), g.Precision(), g.Recall(),
			latency.Ms(text.p50), latency.Ms(latency.Percentile(times, 50)))
	}
	return nil
}

// mostUsed returns the symbol of name with the most uses, and how many
// symbols of that name there are.
func mostUsed(truth *navcheck.Truth, name string) (navcheck.Symbol, int) {
	var top navcheck.Symbol
	n := 0
	for _, s := range truth.Symbols {
		if s.Group == name {
			n++
			if len(s.Uses) > len(top.Uses) || top.Name == "" {
				top = s
			}
		}
	}
	return top, n
}

// lines counts the lines refs are on, in the files compared.
func lines(truth *navcheck.Truth, refs []navcheck.Location) int {
	seen := map[navcheck.Location]bool{}
	for _, l := range refs {
		if truth.Files[l.Path] {
			seen[navcheck.Location{Path: l.Path, Line: l.Line}] = true
		}
	}
	return len(seen)
}

// textAnswer is find_references' whole answer for a name.
type textAnswer struct {
	lines, bytes int
	occurrences  []navcheck.Location
	p50          time.Duration
}

// textual asks find_references for name, every page, runs times.
func textual(srv *localrun.Server, name string, runs int) (textAnswer, error) {
	var a textAnswer
	var times []time.Duration
	for range runs {
		a = textAnswer{}
		start := time.Now()
		cursor := ""
		for {
			args := map[string]any{"name": name, "patterns": []string{"*.go"}, "exclude": []string{"*_test.go", "testdata"}, "limit": 500}
			if cursor != "" {
				args["cursor"] = cursor
			}
			page, err := srv.Call("find_references", args)
			if err != nil {
				return a, err
			}
			if !page.OK {
				return a, fmt.Errorf("%s: %s", page.Code, page.Error)
			}
			if cursor, err = a.add(page.Result); err != nil {
				return a, err
			}
			if cursor == "" {
				break
			}
		}
		times = append(times, time.Since(start))
	}
	a.p50 = latency.Percentile(times, 50)
	return a, nil
}

// add counts one page of the answer and returns the next page's cursor.
func (a *textAnswer) add(result json.RawMessage) (string, error) {
	var page struct {
		Files []struct {
			Path  string
			Lines []struct {
				Line    int
				Columns []int
			}
		}
		NextCursor *string `json:"next_cursor"`
	}
	if err := json.Unmarshal(result, &page); err != nil {
		return "", err
	}
	a.bytes += len(result)
	for _, f := range page.Files {
		for _, l := range f.Lines {
			a.lines++
			for _, c := range l.Columns {
				a.occurrences = append(a.occurrences, navcheck.Location{Path: f.Path, Line: l.Line, Column: c})
			}
		}
	}
	if page.NextCursor == nil {
		return "", nil
	}
	return *page.NextCursor, nil
}
