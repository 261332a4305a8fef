package contextsearch

import (
	"strings"

	"github.com/toolshed/toolshed/shared/codechunk"
	"github.com/toolshed/toolshed/shared/contextindex"
)

// Bounds of a code result's snippet: the window of at most snippetLines
// lines of the chunk that holds the most query words, cut to
// snippetBytes.
const (
	snippetLines = 12
	snippetBytes = 800
)

// snippet returns the lines of a code chunk that answer the query: the
// chunk itself when it is short, else the window of at most snippetLines
// lines holding the most distinct query words (of equals, the one with the
// most lines matching them, then the earliest), with the line numbers of its first and last line in the file. first is
// the chunk's first line.
func snippet(content string, first int, terms map[string]bool) (text string, start, end int) {
	lines := strings.SplitAfter(content, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) <= snippetLines && len(content) <= snippetBytes {
		return content, first, first + len(lines) - 1
	}
	words := make([]map[string]bool, len(lines))
	for i, l := range lines {
		words[i] = map[string]bool{}
		for _, t := range contextindex.Tokens(l) {
			if terms[t] {
				words[i][t] = true
			}
		}
	}
	best, bestDistinct, bestTotal := 0, -1, -1
	for at := 0; at+min(snippetLines, len(lines)) <= len(lines); at++ {
		seen, total := map[string]bool{}, 0
		for _, w := range words[at:min(at+snippetLines, len(lines))] {
			for t := range w {
				seen[t] = true
			}
			total += len(w)
		}
		if len(seen) > bestDistinct || len(seen) == bestDistinct && total > bestTotal {
			best, bestDistinct, bestTotal = at, len(seen), total
		}
	}
	window := lines[best:min(best+snippetLines, len(lines))]
	var b strings.Builder
	n := 0
	for _, l := range window {
		if b.Len()+len(l) > snippetBytes {
			if n == 0 { // one line over the budget: its start
				b.WriteString(codechunk.Cut(l, snippetBytes) + "…")
				n++
			}
			break
		}
		b.WriteString(l)
		n++
	}
	return b.String(), first + best, first + best + n - 1
}

// queryWords are the index terms of a query, for snippets.
func queryWords(query string) map[string]bool {
	out := map[string]bool{}
	for _, t := range contextindex.QueryTerms(query) {
		out[t] = true
	}
	return out
}
