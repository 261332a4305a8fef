package textsearch_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/textsearch"
)

// pathological are patterns whose search of corpus takes far longer than
// a short deadline when nothing stops it. Before lines bounded the
// whole-file regexp, (?s).* was quadratic in each file's size.
var pathological = []struct {
	name, pattern string
	plan          string // the start of the plan
}{
	{"dot-all", `(?s).*`, "whole file"},
	{"dot-all-between", `(?s)\d.*[a-c]`, "whole file"},
	{"nested-groups", `((.*)(.*)(.*)(.*))+x`, `literals "x"`},
	{"ambiguous-repeat", `(a|aa)*b`, `literals "b"`},
	{"classes-alternation", classesAlternation(200), "whole file"},
	{"literals-alternation", literalsAlternation(200), "whole file"},
}

// shown is the Limit of the searches for pathological patterns.
const shown = 10

// classesAlternation is an alternation of about n characters whose
// branches are character classes only, so no literal prefilters it:
// ([a-c][0-2]|[b-d][1-3]|…).
func classesAlternation(n int) string {
	var b strings.Builder
	b.WriteString("(")
	for i := 0; b.Len() < n-12; i++ {
		if i > 0 {
			b.WriteString("|")
		}
		lo, d := byte('a'+i%24), byte('0'+i%8)
		b.Write([]byte{'[', lo, '-', lo + 2, ']', '[', d, '-', d + 2, ']'})
	}
	b.WriteString(")")
	return b.String()
}

// literalsAlternation is an alternation of about n characters of more
// literals than a prefilter holds: (a0|b0|…|a1|…).
func literalsAlternation(n int) string {
	var b strings.Builder
	b.WriteString("(")
	for i := 0; b.Len() < n-4; i++ {
		if i > 0 {
			b.WriteString("|")
		}
		b.Write([]byte{byte('a' + i%26), byte('0' + i/26)})
	}
	b.WriteString(")")
	return b.String()
}

// corpus is a few files of mixed text, 4 MB in all, built once.
var corpus = sync.OnceValue(func() []*repo.File {
	words := []string{"func", "a", "aa", "aaa", "ab", "b", "x", "return", "err", "nil", "if", "{", "}", "(", ")",
		"//", "TODO", "context", "ctx", "z", "0", "42", "\t", "  ", "\"str\"", "ünï", "abc", "xyz", "cab"}
	rng := rand.New(rand.NewPCG(1, 2))
	var files []*repo.File
	for i := range 4 {
		var b bytes.Buffer
		for b.Len() < 1<<20 {
			for range rng.IntN(20) {
				b.WriteString(words[rng.IntN(len(words))])
				if rng.IntN(3) > 0 {
					b.WriteByte(' ')
				}
			}
			b.WriteByte('\n')
		}
		files = append(files, repo.NewFile(string(rune('a'+i))+".txt", b.Bytes(), time.Time{}))
	}
	for _, f := range files {
		f.Trigrams() // built on first use, outside any window: not what is measured
	}
	return files
})

// TestPathologicalPlans checks that the patterns test what they mean to.
func TestPathologicalPlans(t *testing.T) {
	for _, p := range pathological {
		q, err := textsearch.Compile(p.pattern, true)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		if got := q.String(); !strings.HasPrefix(got, p.plan) {
			t.Errorf("%s: plan %s, want %s…", p.name, got, p.plan)
		}
		if len(p.pattern) < 190 && strings.Contains(p.name, "alternation") {
			t.Errorf("%s: pattern of %d characters", p.name, len(p.pattern))
		}
	}
}

// TestPathologicalDeadline searches corpus for each pathological pattern
// with a short deadline: Search either finishes or answers with what it
// found by then, and in either case nothing of the package runs once it
// has returned and at most one window per worker was searched after the
// deadline. (No duration is asserted: the machine may be loaded.)
func TestPathologicalDeadline(t *testing.T) {
	files := corpus()
	for _, p := range pathological {
		t.Run(p.name, func(t *testing.T) {
			q, err := textsearch.Compile(p.pattern, true)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			late := countLateWindows(ctx)
			defer late.restore()
			res := textsearch.Search(ctx, files, q, textsearch.Options{Limit: shown})
			if n := busyGoroutines(); n != 0 {
				t.Errorf("%d goroutines still in the package after Search returned", n)
			}
			late.check(t, q)
			checkPartial(t, files, p.pattern, shown, res)
			if res.Complete {
				t.Logf("finished: %d matching lines", res.Total)
			} else {
				t.Logf("deadline passed after %d files, %d lines; %d windows (%d bytes) searched after it",
					res.FilesSearched, res.Total, late.windows.Load(), late.bytes.Load())
			}
		})
	}
}

// TestCancelMidFile cancels the search as soon as the first window has
// been searched: Search answers incomplete with what it found, and each of
// the other workers searches at most the window it was in.
func TestCancelMidFile(t *testing.T) {
	files := corpus()
	for _, p := range pathological {
		t.Run(p.name, func(t *testing.T) {
			q, err := textsearch.Compile(p.pattern, true)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			late := countLateWindows(ctx)
			defer late.restore()
			var first sync.Once
			restore := textsearch.OnWindow(func(n int) {
				first.Do(cancel)
				late.count(n)
			})
			defer restore()
			res := textsearch.Search(ctx, files, q, textsearch.Options{Limit: shown})
			if res.Complete || res.FilesSearched == len(files) {
				t.Errorf("cancelled after one window: complete %v, %d of %d files searched", res.Complete, res.FilesSearched, len(files))
			}
			checkPartial(t, files, p.pattern, shown, res)
			if n := busyGoroutines(); n != 0 {
				t.Errorf("%d goroutines still in the package after Search returned", n)
			}
			late.check(t, q)
		})
	}
}

// TestCancelWhileMaking cancels the search once its last window has been
// searched, so that every file is searched but the matches, 20,000 asked
// for, are still to be made: Search stops making them, and answers
// incomplete with every file counted.
func TestCancelWhileMaking(t *testing.T) {
	const perFile, nFiles = 150, 200
	var files []*repo.File
	for i := range nFiles {
		text := strings.Repeat("// Serve answers a request\nfunc f() {}\n", perFile)
		files = append(files, repo.NewFile(fmt.Sprintf("f%03d.go", i), []byte(text), time.Time{}))
	}
	q, err := textsearch.Compile(`\bServe\b`, true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var windows atomic.Int64
	restore := textsearch.OnWindow(func(int) {
		if windows.Add(1) == nFiles {
			cancel()
		}
	})
	defer restore()
	res := textsearch.Search(ctx, files, q, textsearch.Options{Limit: 20000, Context: -1})
	if windows.Load() != nFiles || res.FilesSearched != nFiles || res.Total != perFile*nFiles {
		t.Fatalf("%d windows, %d files searched, %d lines counted; want one window a file, all %d files and %d lines",
			windows.Load(), res.FilesSearched, res.Total, nFiles, perFile*nFiles)
	}
	if res.Complete || len(res.Matches) >= res.Total {
		t.Errorf("cancelled before the matches were made: complete %v, %d of %d made", res.Complete, len(res.Matches), res.Total)
	}
	if len(res.Matches) == 0 {
		t.Errorf("no match made: the first ones are made before the context is looked at")
	}
	checkPartial(t, files, `\bServe\b`, 20000, res)
}

// checkPartial checks a result of a search for at most limit matches
// against the files: it counts no more files than there are, it is
// complete exactly when every file was searched and every match asked for
// made, and every match it shows is a line of its file that the pattern
// matches, at its column.
func checkPartial(t *testing.T, files []*repo.File, pattern string, limit int, res textsearch.Result) {
	t.Helper()
	made := len(res.Matches) == min(res.Total, limit)
	if res.FilesSearched > len(files) || res.Complete != (res.FilesSearched == len(files) && made) {
		t.Errorf("complete %v with %d of %d files searched and %d of %d matches made (limit %d)",
			res.Complete, res.FilesSearched, len(files), len(res.Matches), res.Total, limit)
	}
	if len(res.Matches) > res.Total {
		t.Errorf("%d matches shown of %d counted", len(res.Matches), res.Total)
	}
	re := regexp.MustCompile(pattern)
	byPath := map[string][]byte{}
	for _, f := range files {
		byPath[f.Path] = f.Content()
	}
	for _, m := range res.Matches {
		lines := strings.Split(string(byPath[m.File]), "\n")
		if m.Line > len(lines) {
			t.Errorf("match %s:%d: the file has %d lines", m.File, m.Line, len(lines))
			continue
		}
		if loc := re.FindStringIndex(lines[m.Line-1]); loc == nil || loc[0]+1 != m.Column {
			t.Errorf("match %s:%d:%d: the line's first match is at %v", m.File, m.Line, m.Column, loc)
		}
	}
}

// lateWindows counts the windows searched once a context is done.
type lateWindows struct {
	ctx            context.Context
	windows, bytes atomic.Int64
	restore        func()
}

func countLateWindows(ctx context.Context) *lateWindows {
	l := &lateWindows{ctx: ctx}
	l.restore = textsearch.OnWindow(l.count)
	return l
}

// count is told of a window of n bytes just searched.
func (l *lateWindows) count(n int) {
	select {
	case <-l.ctx.Done():
		l.windows.Add(1)
		l.bytes.Add(int64(n))
	default:
	}
}

// check fails t if a worker searched more than one window after the
// context was done. A window is at most Window bytes as the corpus has
// no line that long.
func (l *lateWindows) check(t *testing.T, q *textsearch.Query) {
	t.Helper()
	workers := int64(runtime.GOMAXPROCS(0))
	if w, b := l.windows.Load(), l.bytes.Load(); w > workers || b > workers*int64(textsearch.Window(q)) {
		t.Errorf("%d windows of %d bytes in all searched after the context was done; at most %d of %d bytes each may be",
			w, b, workers, textsearch.Window(q))
	}
}

// busyGoroutines counts the goroutines, other than the caller's, with a
// function of the package on their stack.
func busyGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	busy := 0
	// The first goroutine is the caller.
	for _, g := range strings.Split(string(buf), "\n\n")[1:] {
		for _, line := range strings.Split(g, "\n") {
			// Frames are "function(args)" lines; "created by" names the
			// function that started the goroutine, not one it is in.
			if strings.HasPrefix(line, "github.com/toolshed/toolshed/shared/textsearch.") {
				busy++
				break
			}
		}
	}
	return busy
}

// TestResumeFromReached: a search stopped early (its context ends once a
// few windows are searched), resumed from its Reached again and again,
// finds every matching line once, in order: Matches[:InOrder] of each
// round, end to end, are the matches of a search never stopped, whether
// one worker searches the files in turn or several do. A search resumed
// after a file that is gone starts at the file after it.
func TestResumeFromReached(t *testing.T) {
	var files []*repo.File
	for _, p := range []string{"a/x.go", "a/y.go", "b.go", "c/d.go", "e.go"} { // in walk order
		var b strings.Builder
		for i := range 200 {
			fmt.Fprintf(&b, "line %d%s\n", i, map[bool]string{true: " Serve()"}[i%3 == 1])
		}
		files = append(files, repo.NewFile(p, []byte(b.String()), time.Time{}))
	}
	q, err := textsearch.Compile(`\bServe\b`, true)
	if err != nil {
		t.Fatal(err)
	}
	textsearch.SetWindow(q, 64)
	lines := func(ms []textsearch.Match) []string {
		var out []string
		for _, m := range ms {
			out = append(out, fmt.Sprintf("%s:%d", m.File, m.Line))
		}
		return out
	}
	all := lines(textsearch.Search(context.Background(), files, q, textsearch.Options{Limit: 1 << 20, Context: -1}).Matches)
	for _, procs := range []int{1, runtime.GOMAXPROCS(0)} {
		for _, stopAfter := range []int64{1, 5, 40} {
			prev := runtime.GOMAXPROCS(procs)
			var got []string
			var after textsearch.Position
			rounds := 0
			for ; rounds < 10000; rounds++ {
				ctx, cancel := context.WithCancel(context.Background())
				var windows atomic.Int64
				restore := textsearch.OnWindow(func(int) {
					if windows.Add(1) == stopAfter {
						cancel()
					}
				})
				res := textsearch.Search(ctx, files, q, textsearch.Options{Limit: 1 << 20, Context: -1, After: after})
				restore()
				cancel()
				got = append(got, lines(res.Matches[:res.InOrder])...)
				if res.Complete {
					break
				}
				after = res.Reached
			}
			runtime.GOMAXPROCS(prev)
			if strings.Join(got, " ") != strings.Join(all, " ") || rounds == 0 {
				t.Errorf("%d workers, stopped after %d windows, resumed %d times: %d lines, want the %d of one search",
					procs, stopAfter, rounds, len(got), len(all))
			}
		}
	}
	gone := textsearch.Search(context.Background(), files, q, textsearch.Options{Limit: 1 << 20, Context: -1,
		After: textsearch.Position{Path: "a/z.go", Line: 3}})
	if want := all[2*len(all)/5:]; strings.Join(lines(gone.Matches), " ") != strings.Join(want, " ") {
		t.Errorf("after a file that is gone: %v..., want %v...", lines(gone.Matches)[:3], want[:3])
	}
}
