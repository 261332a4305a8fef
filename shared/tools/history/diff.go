package history

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/githistory"
)

// MaxDiffBytes is the most a page of a diff carries in hunk lines: the
// page ends before the file that would pass it, and a first file larger
// than it alone is cut.
const MaxDiffBytes = 200 << 10

// diffJSON is the diff part of get_commit's and compare's answers: the
// stat of the whole diff first, then a page of its files.
type diffJSON struct {
	Stat       statJSON   `json:"stat"`
	Files      []fileJSON `json:"files"`
	TotalFiles int        `json:"totalFiles"`
	Withheld   int        `json:"withheld,omitempty"`
	NextCursor *string    `json:"next_cursor"`
}

// diffQuery is a page of the diff from From to To (From "": To against
// its first parent).
type diffQuery struct {
	From, To string
	Path     string // only this file, or the files under this folder
	StatOnly bool
	Start    int // the first file of the page
	Limit    int
}

// diff returns a page of q's diff; pages makes the next page's cursor.
func (o opened) diff(ctx context.Context, q diffQuery, pages cursor.Scope) (diffJSON, error) {
	changes, err := o.git.Changes(ctx, q.From, q.To)
	if err != nil {
		return diffJSON{}, fmt.Errorf("diff %s %s: %w", q.From, q.To, err)
	}
	var out diffJSON
	var shown []githistory.Change
	for _, c := range changes {
		switch {
		case q.Path != "" && !under(c.Path, q.Path) && !under(c.OldPath, q.Path):
		case !o.visible(c.Path, c.OldPath):
			out.Withheld++
		default:
			shown = append(shown, c)
			out.Stat.Additions += c.Added
			out.Stat.Deletions += c.Deleted
		}
	}
	out.Stat.Files, out.TotalFiles = len(shown), len(shown)
	page := shown[min(q.Start, len(shown)):min(q.Start+q.Limit, len(shown))]
	if out.Files, err = o.files(ctx, q, page); err != nil {
		return diffJSON{}, err
	}
	if next := q.Start + len(out.Files); next < len(shown) {
		c := pages.Encode(q.From, q.To, next)
		out.NextCursor = &c
	}
	return out, nil
}

// under reports whether p is the path or lies in the folder of that name.
func under(p, path string) bool {
	return p != "" && (p == path || strings.HasPrefix(p, path+"/"))
}

// files are page's files with their hunks (unless StatOnly) within
// MaxDiffBytes: the list ends before a file that would pass it.
func (o opened) files(ctx context.Context, q diffQuery, page []githistory.Change) ([]fileJSON, error) {
	out := make([]fileJSON, 0, len(page))
	for _, c := range page {
		f := statOf(c.FileStat)
		f.Status = statuses[c.Status]
		if c.Binary {
			f.Note = "binary"
		}
		out = append(out, f)
	}
	if q.StatOnly {
		return out, nil
	}
	patches, err := o.git.Patches(ctx, q.From, q.To, page)
	if err != nil {
		return nil, err
	}
	budget := MaxDiffBytes
	for i, p := range patches {
		if out[i].Binary {
			continue
		}
		if err := o.checkContent(page[i].Path, patchText(p)); err != nil {
			out[i].Note = "withheld: " + err.Error()
			continue
		}
		hunks, size, cut := fit(p.Hunks, budget)
		if cut && i > 0 {
			return out[:i], nil // the next page starts with it
		}
		out[i].Hunks, budget = hunksOf(hunks), budget-size
		if cut {
			out[i].Note = fmt.Sprintf("cut: %d of %d hunks shown, the answer's byte budget (%d KB) reached; get_commit or compare with path for the file alone", len(hunks), len(p.Hunks), MaxDiffBytes>>10)
			return out[:i+1], nil
		}
	}
	return out, nil
}

// fit returns the first hunks whose size fits budget, their size, and
// whether some were left out.
func fit(hunks []githistory.Hunk, budget int) ([]githistory.Hunk, int, bool) {
	size := 0
	for i, h := range hunks {
		if size+h.Bytes() > budget && i == 0 {
			return []githistory.Hunk{cutHunk(h, budget)}, budget, true
		}
		if size+h.Bytes() > budget {
			return hunks[:i], size, true
		}
		size += h.Bytes()
	}
	return hunks, size, false
}

// patchText is the content a patch shows, without git's first character
// of each line, for the secret scan.
func patchText(p githistory.Patch) []byte {
	var b strings.Builder
	for _, h := range p.Hunks {
		for _, l := range h.Lines {
			if l != "" {
				b.WriteString(l[1:])
			}
			b.WriteByte('\n')
		}
	}
	return []byte(b.String())
}

// cutHunk is h with the lines that fit budget.
func cutHunk(h githistory.Hunk, budget int) githistory.Hunk {
	size := len(h.Header)
	for i, l := range h.Lines {
		if size+len(l)+1 > budget {
			h.Lines = h.Lines[:i]
			break
		}
		size += len(l) + 1
	}
	return h
}
