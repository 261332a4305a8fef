package textsearch

import (
	"bytes"
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/toolshed/toolshed/shared/repo"
)

// Defaults of Options.
const (
	DefaultContext      = 2
	DefaultMaxLineBytes = 400
)

// Options shape a search.
type Options struct {
	// Limit is how many matches are returned; every match is counted.
	Limit int
	// Include, when set, keeps only the files it accepts.
	Include func(path string) bool
	// Context is the number of lines shown before and after a match
	// (negative: none; 0: DefaultContext).
	Context int
	// MaxLineBytes cuts longer lines in the output (0: DefaultMaxLineBytes).
	MaxLineBytes int
	// After resumes a search after a line (a Result's Reached, or the
	// last line a page showed): the files before the one at After.Path,
	// and that file's lines up to After.Line, are neither counted nor
	// kept. The files must then be in walk order (repo.View.Searchable's,
	// repo.WalkOrder). Unset, every line is searched.
	After Position
}

// from returns the files a search resuming after o.After looks in:
// After's file (if it is still there) and those after it.
func (o Options) from(files []*repo.File) []*repo.File {
	if o.After.Path == "" {
		return files
	}
	i, _ := slices.BinarySearchFunc(files, o.After.Path, func(f *repo.File, p string) int { return repo.WalkOrder(f.Path, p) })
	return files[i:]
}

// skip is how many first lines of f the search leaves out (After).
func (o Options) skip(f *repo.File) int {
	if f.Path == o.After.Path {
		return o.After.Line
	}
	return 0
}

// Position is a line of a file.
type Position struct {
	Path string
	Line int // 1-based; 0: before the file's first line
}

// Match is one matching line.
type Match struct {
	File   string
	Line   int // 1-based
	Column int // 1-based byte offset of the first match in the line
	// Text is the line; a line longer than MaxLineBytes is cut around the
	// match and each cut end is marked with "…".
	Text          string
	Before, After []string
}

// Result is what Search found. When its context ended before every file
// was searched, Complete is false, and Total and FilesSearched are what
// was counted by then: lower bounds. When it ended while the matches were
// made (past MadeInFull), Complete is false too, and only Matches is cut.
type Result struct {
	Matches       []Match // the first Limit matches found (or those made by then), in file order then line order
	Total         int     // the matching lines counted
	FilesSearched int     // the files searched to their end
	Complete      bool    // every file was searched and its matches made
	// Reached, when the search is not Complete, is how far it went in the
	// order of the files: it searched every line up to Reached (the line
	// Reached.Line of the file at Reached.Path; 0: none of that file's),
	// counted its matches and made them (those of Limit). A search with
	// Options.After at Reached goes on from there and misses no line.
	// Past Reached, files searched meanwhile (the workers take files in
	// turn) may have given matches too: Matches[InOrder:].
	Reached Position
	// InOrder is how many of Matches lie up to Reached: every one when
	// the search is Complete.
	InOrder int
}

// hit is a matching line of a file: its byte range and position.
type hit struct {
	start, end   int // the line, without its "\n"
	line, column int // 1-based; line is set only for kept hits
}

// fileHits is what one file yielded: the count and the first hits, and
// whether the file was searched to its end, or else through which line.
type fileHits struct {
	count    int
	hits     []hit
	searched bool
	through  int
}

// Search looks for q in files (and only those Include accepts), a worker
// per core, and returns the first Limit matches in the order of files.
//
// When ctx is done, each worker stops at the end of the window it is
// searching (see windowBudget), and once every worker has returned Search
// answers with what was found by then, Complete false: the matches of the
// files (and the windows of files) searched, in file order, and Reached,
// where a search resumed (Options.After) goes on from. Making the matches
// stops there too, past the first MadeInFull, leaving the rest out (Total
// and FilesSearched are then exact).
func Search(ctx context.Context, files []*repo.File, q *Query, o Options) Result {
	if o.Context == 0 {
		o.Context = DefaultContext
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	files = o.from(files)
	if o.Include != nil {
		kept := make([]*repo.File, 0, len(files))
		for _, f := range files {
			if o.Include(f.Path) {
				kept = append(kept, f)
			}
		}
		files = kept
	}
	done := ctx.Done()
	results := make([]fileHits, len(files))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var buf []byte // the content of the file searched
			for {
				i := int(next.Add(1) - 1)
				if i >= len(files) || isDone(done) {
					return
				}
				results[i] = q.searchFile(done, files[i], o.Limit, o.skip(files[i]), &buf)
			}
		})
	}
	wg.Wait()
	return gather(files, results, o, done)
}

// gather makes the Result of a search from each file's hits, in the order
// of files: the first Limit matches (as many as done lets it make), the
// counts, and, when the search stopped before its end, how far it went in
// that order (Reached).
func gather(files []*repo.File, results []fileHits, o Options, done <-chan struct{}) Result {
	res := Result{Matches: []Match{}}
	built := true   // every hit wanted is made a Match
	inOrder := true // every file so far was searched to its end and its matches made
	stop := func(at Position) {
		if inOrder {
			res.Reached, res.InOrder, inOrder = at, len(res.Matches), false
		}
	}
	var buf []byte
	for i, fr := range results {
		if fr.searched {
			res.FilesSearched++
		}
		res.Total += fr.count
		if built && len(fr.hits) > 0 && len(res.Matches) < o.Limit {
			if built = res.make(files[i], fr.hits, o, done, &buf); !built {
				last := res.Matches[len(res.Matches)-1]
				stop(Position{Path: last.File, Line: last.Line})
			}
		}
		if !fr.searched {
			stop(Position{Path: files[i].Path, Line: max(fr.through, o.skip(files[i]))})
		}
	}
	if inOrder {
		res.InOrder = len(res.Matches)
	}
	res.Complete = built && res.FilesSearched == len(files)
	return res
}

// make appends the matches of hits, lines of the file f, to res.Matches,
// up to o.Limit of them. Past the first MadeInFull, it stops once done is
// closed, and reports false.
func (res *Result) make(f *repo.File, hits []hit, o Options, done <-chan struct{}, buf *[]byte) bool {
	data := f.ContentInto(buf)
	for _, h := range hits {
		if len(res.Matches) >= o.Limit {
			break
		}
		if n := len(res.Matches); n > 0 && n%MadeInFull == 0 && isDone(done) {
			return false
		}
		res.Matches = append(res.Matches, match(f.Path, data, h, o))
	}
	return true
}

// MadeInFull is how many matches Search makes even once its context has
// ended, and how many it makes between two looks at it past them: a
// large Limit (find_references asks for 20,000) takes tens of
// milliseconds to make, one up to MadeInFull (grep's) is always made.
const MadeInFull = 256

// isDone reports whether done (a context's Done channel, nil for a
// context that never ends) is closed, without blocking or locking.
func isDone(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// windowSearched, when set (by tests), is told the size of each window
// once it has been searched.
var windowSearched func(n int)

// searchFile counts the matching lines of f after its first skip lines
// and keeps the first keep. It searches a window of whole lines at a time
// and stops early, with what it has, once done is closed. A file its
// trigrams rule out is not decompressed; one that may match is, into *buf
// (reused from file to file).
func (q *Query) searchFile(done <-chan struct{}, f *repo.File, keep, skip int, buf *[]byte) fileHits {
	fr := fileHits{searched: true}
	if !q.mayMatch(f) {
		return fr
	}
	data := f.ContentInto(buf)
	from := lineOffset(data, skip)
	lineNo, lineAt := skip+1, from
	add := func(start, end, col int) {
		fr.count++
		if len(fr.hits) < keep {
			lineNo += bytes.Count(data[lineAt:start], newline)
			lineAt = start
			fr.hits = append(fr.hits, hit{start: start, end: end, line: lineNo, column: col})
		}
	}
	var next []int // scanLiterals' scratch
	if q.finders != nil {
		next = make([]int, len(q.finders))
	}
	for a := from; a < len(data); {
		if a > from && isDone(done) {
			// The caller looked just before the first window. The lines
			// before a were searched.
			fr.searched, fr.through = false, skip+bytes.Count(data[from:a], newline)
			break
		}
		b := windowEnd(data, a, q.window)
		switch {
		case q.perLine:
			q.matchLines(data, a, b, add)
		case q.finders == nil:
			q.matchWhole(data, a, b, add)
		default:
			q.scanLiterals(data, a, b, next, add)
		}
		if windowSearched != nil {
			windowSearched(b - a)
		}
		a = b + 1
	}
	return fr
}

// windowEnd returns the end b of the window of data that starts at a
// line start a. The window [a, b) is whole lines: those of data[a:b], the
// last one (possibly empty) ending at b, where data[b] is "\n" or b is
// len(data). It ends at the last "\n" in the size bytes from a; when
// there is none, it is the line at a, however long. The "\n" that ends
// data (if any) starts no line, so no window holds the empty text after
// it.
func windowEnd(data []byte, a, size int) int {
	if len(data)-a <= size {
		if data[len(data)-1] == '\n' {
			return len(data) - 1
		}
		return len(data)
	}
	if j := bytes.LastIndexByte(data[a:a+size], '\n'); j >= 0 {
		return a + j
	}
	return lineEnd(data, a+size)
}

// matchLines matches each line of the window on its own.
func (q *Query) matchLines(data []byte, a, b int, add func(start, end, col int)) {
	for start := a; start <= b; {
		end := lineEnd(data[:b], start)
		if loc := q.line.FindIndex(data[start:end]); loc != nil {
			add(start, end, loc[0]+1)
		}
		start = end + 1
	}
}

// matchWhole finds the matching lines of the window with the whole-file
// regexp: as no match crosses a line, the first match from a line start
// is in the first matching line, and the search goes on from the next.
// The line regexp then gives the column (and has the last word).
func (q *Query) matchWhole(data []byte, a, b int, add func(start, end, col int)) {
	w := data[a:b]
	for pos := 0; pos <= len(w); {
		loc := q.whole.FindIndex(w[pos:])
		if loc == nil {
			return
		}
		start, end := lineStart(w, pos+loc[0]), lineEnd(w, pos+loc[0])
		if loc := q.line.FindIndex(w[start:end]); loc != nil {
			add(a+start, a+end, loc[0]+1)
		}
		pos = end + 1
	}
}

// scanLiterals finds the lines of the window holding a prefilter literal
// and matches them (or, for an exact query, takes them as they are). The
// literals are looked for only within the window: the one a matching line
// holds has no "\n", so it lies within the line.
// next is scratch, one per finder: the next occurrence of each literal at
// or after pos; -1: none left in the window.
func (q *Query) scanLiterals(data []byte, a, b int, next []int, add func(start, end, col int)) {
	for i := range next {
		next[i] = -2
	}
	for pos := a; pos < b; {
		at := -1
		for i, f := range q.finders {
			if next[i] != -1 && next[i] < pos {
				if j := f.index(data[pos:b]); j >= 0 {
					next[i] = pos + j
				} else {
					next[i] = -1
				}
			}
			if next[i] >= 0 && (at < 0 || next[i] < at) {
				at = next[i]
			}
		}
		if at < 0 {
			return
		}
		start, end := lineStart(data, at), lineEnd(data, at)
		if q.exact {
			add(start, end, at-start+1)
		} else if loc := q.line.FindIndex(data[start:end]); loc != nil {
			add(start, end, loc[0]+1)
		}
		pos = end + 1
	}
}

var newline = []byte{'\n'}

// lineOffset returns where the line after the first n lines of data
// starts: len(data) when there is none.
func lineOffset(data []byte, n int) int {
	at := 0
	for ; n > 0 && at < len(data); n-- {
		j := bytes.IndexByte(data[at:], '\n')
		if j < 0 {
			return len(data)
		}
		at += j + 1
	}
	return at
}

func lineStart(data []byte, i int) int { return bytes.LastIndexByte(data[:i], '\n') + 1 }

func lineEnd(data []byte, i int) int {
	if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(data)
}

// match builds the output of one hit in the file at path, whose content
// is data: its text and context lines.
func match(path string, data []byte, h hit, o Options) Match {
	m := Match{File: path, Line: h.line, Column: h.column, Before: []string{}, After: []string{}}
	m.Text = Cut(data[h.start:h.end], h.column-1, o.MaxLineBytes)
	for i, start := 0, h.start; i < o.Context && start > 0; i++ {
		end := start - 1
		start = lineStart(data, end)
		m.Before = append([]string{Cut(data[start:end], 0, o.MaxLineBytes)}, m.Before...)
	}
	for i, end := 0, h.end; i < o.Context && end < len(data); i++ {
		start := end + 1
		if start >= len(data) {
			break // the file ends with a newline: there is no line after it
		}
		end = lineEnd(data, start)
		m.After = append(m.After, Cut(data[start:end], 0, o.MaxLineBytes))
	}
	return m
}

// Cut returns a line for display: without its "\r", and when longer than
// max bytes a window of max bytes starting a little before at (the match),
// on character boundaries, with "…" where it was cut.
func Cut(line []byte, at, max int) string {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) <= max {
		return string(line)
	}
	start := at - max/4
	if start < 0 {
		start = 0
	}
	end := start + max
	if end > len(line) {
		end, start = len(line), len(line)-max
	}
	for start > 0 && !utf8.RuneStart(line[start]) {
		start--
	}
	for end < len(line) && !utf8.RuneStart(line[end]) {
		end--
	}
	s := string(line[start:end])
	if start > 0 {
		s = "…" + s
	}
	if end < len(line) {
		s += "…"
	}
	return s
}
