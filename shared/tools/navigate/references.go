package navigate

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/toolshed/toolshed/shared/codespans"
	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/language"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/textsearch"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

type refsInput struct {
	Name            string     `json:"name"`
	Path            string     `json:"path"`
	Patterns        []string   `json:"patterns"`
	Exclude         []string   `json:"exclude"`
	ExcludeComments bool       `json:"excludeComments"`
	ExcludeStrings  bool       `json:"excludeStrings"`
	Limit           schema.Int `json:"limit"`
	Cursor          string     `json:"cursor"`
}

type refLineJSON struct {
	Line    int    `json:"line"`
	Columns []int  `json:"columns"`
	Text    string `json:"text"`
}

type refFileJSON struct {
	Path     string        `json:"path"`
	Language string        `json:"language"`
	Lines    []refLineJSON `json:"lines"`
}

type refsOutput struct {
	Name       string        `json:"name"`
	Files      []refFileJSON `json:"files"`
	TotalLines int           `json:"totalLines"`
	NextCursor *string       `json:"next_cursor"`
	Incomplete bool          `json:"incomplete,omitempty"`
	Message    string        `json:"message,omitempty"`
}

// maxFilteredLines bounds the lines a search that leaves comments or
// strings out looks at: each is classified before it is counted, so its
// total is a lower bound past this many.
const maxFilteredLines = 20000

// identifier is what find_references looks for.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// findReferences serves find_references: the lines where an identifier
// occurs as a whole word, case-sensitively (as `rg -w -s`), grouped by
// file, each with the columns of every occurrence.
func (s service) findReferences(ctx context.Context, call toolkit.Call, in refsInput) (toolkit.Result, error) {
	if !identifier.MatchString(in.Name) {
		return toolkit.Result{}, toolerr.Field("name", "%q is not an identifier: letters, digits and '_', not starting with a digit", in.Name)
	}
	word := `\b` + in.Name + `\b`
	q, err := textsearch.Compile(word, true)
	if err != nil {
		return toolkit.Result{}, fmt.Errorf("compile %s: %w", word, err)
	}
	sel, err := newSelector(in.Patterns, in.Exclude)
	if err != nil {
		return toolkit.Result{}, err
	}
	offset := 0
	if in.Cursor != "" {
		if offset, err = decodeOffset(FindReferencesTool, in.Cursor); err != nil {
			return toolkit.Result{}, err
		}
	}
	snap, err := repo.OpenFor(ctx, s.src, call.Tenant)
	if err != nil {
		return toolkit.Result{}, err
	}
	files, err := snap.Searchable(ctx)
	if err != nil {
		return toolkit.Result{}, fmt.Errorf("list searchable files: %w", err)
	}
	f := refFinder{word: regexp.MustCompile(word), files: map[string]*repo.File{}, in: in}
	for _, file := range files {
		f.files[file.Path] = file
	}
	include := under(folderOf(in.Path), sel)
	limit := offset + int(in.Limit)
	if f.filtering() {
		limit = maxFilteredLines
	}
	gctx, cancel := toolkit.Gathering(ctx)
	res := textsearch.Search(gctx, files, q, textsearch.Options{Limit: limit, Include: include, Context: -1})
	cancel()
	lines, total := f.lines(res)
	complete := res.Complete && (!f.filtering() || res.Total <= maxFilteredLines)
	out := refsOutput{Name: in.Name, Files: []refFileJSON{}, TotalLines: total, Incomplete: !complete}
	end := min(offset+int(in.Limit), len(lines))
	for _, l := range lines[min(offset, end):end] {
		out.add(l)
	}
	if end < total {
		next := encodeOffset(FindReferencesTool, end)
		out.NextCursor = &next
	}
	out.Message = refsMessage(out, end-min(offset, end))
	return toolkit.Result{Data: out, Message: out.Message}, nil
}

// under is the filter of the files below dir ("" for the root) that sel
// keeps.
func under(dir string, sel selector) func(string) bool {
	return func(p string) bool {
		rel, ok := relative(dir, p)
		return ok && sel.keeps(rel)
	}
}

// refLine is one line of a file with its occurrences.
type refLine struct {
	path    string
	line    int
	columns []int
	text    string
}

// refFinder turns matching lines into references.
type refFinder struct {
	word  *regexp.Regexp
	files map[string]*repo.File
	in    refsInput
	// The file being read: its line starts so far and its spans.
	path   string
	starts []int
	spans  []codespans.Span
}

// filtering reports whether comments or strings are left out.
func (f *refFinder) filtering() bool { return f.in.ExcludeComments || f.in.ExcludeStrings }

// lines returns the search's matching lines with the columns of every
// occurrence, less the occurrences in comments or strings when those are
// left out (and the lines left with none), and their total.
func (f *refFinder) lines(res textsearch.Result) ([]refLine, int) {
	out := make([]refLine, 0, len(res.Matches))
	for _, m := range res.Matches {
		if cols := f.columns(m.File, m.Line); len(cols) > 0 {
			out = append(out, refLine{path: m.File, line: m.Line, columns: cols, text: m.Text})
		}
	}
	if !f.filtering() {
		return out, res.Total
	}
	return out, len(out) // a lower bound when the search stopped at its limit
}

// columns returns the 1-based byte columns of the occurrences on a line of
// a file that are kept.
func (f *refFinder) columns(path string, line int) []int {
	file := f.files[path]
	if path != f.path {
		f.path, f.starts, f.spans = path, []int{0}, nil
		if f.filtering() {
			f.spans = codespans.Of(language.Of(path), file.Data)
		}
	}
	data := file.Data
	for len(f.starts) <= line { // the line starts up to the one after line
		at := f.starts[len(f.starts)-1]
		next := strings.IndexByte(file.Text()[at:], '\n')
		if next < 0 {
			f.starts = append(f.starts, len(data)+1)
			continue
		}
		f.starts = append(f.starts, at+next+1)
	}
	start, end := f.starts[line-1], min(f.starts[line]-1, len(data))
	var cols []int
	for _, loc := range f.word.FindAllIndex(data[start:end], -1) {
		switch codespans.At(f.spans, start+loc[0]) {
		case codespans.Comment:
			if f.in.ExcludeComments {
				continue
			}
		case codespans.String:
			if f.in.ExcludeStrings {
				continue
			}
		}
		cols = append(cols, loc[0]+1)
	}
	return cols
}

// add puts a line into the output, under its file.
func (o *refsOutput) add(l refLine) {
	if n := len(o.Files); n == 0 || o.Files[n-1].Path != l.path {
		o.Files = append(o.Files, refFileJSON{Path: l.path, Language: language.Of(l.path), Lines: []refLineJSON{}})
	}
	last := &o.Files[len(o.Files)-1]
	last.Lines = append(last.Lines, refLineJSON{Line: l.line, Columns: l.columns, Text: l.text})
}

// refsMessage says what the page holds and how to get the rest.
func refsMessage(out refsOutput, shown int) string {
	var msg string
	switch {
	case out.TotalLines == 0:
		msg = fmt.Sprintf("No references to %s found", out.Name)
	case out.NextCursor != nil:
		msg = fmt.Sprintf("Showing %d of %d lines referring to %s; pass next_cursor as cursor for the next page", shown, out.TotalLines, out.Name)
	default:
		msg = fmt.Sprintf("%d lines referring to %s", shown, out.Name)
	}
	if out.Incomplete {
		msg += "; the search stopped at its limit: totalLines is a lower bound"
	}
	return msg
}

// encodeOffset and decodeOffset are the cursors of listings paged by
// position: the position of the first entry of the next page.
func encodeOffset(kind string, offset int) string {
	return cursor.Encode(kind, strconv.Itoa(offset))
}

func decodeOffset(kind, c string) (int, error) {
	position, err := cursor.Decode(kind, c, func(p string) bool {
		n, err := strconv.Atoi(p)
		return err == nil && n > 0 && strconv.Itoa(n) == p
	})
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(position)
}
