package codechunk

import "strings"

// splitMarkdown cuts Markdown into one chunk per heading (ATX "#" to
// "######" headings outside fenced code blocks): the heading line and the
// text up to the next heading. Text before the first heading is a chunk of
// its own. Sections longer than maxLines are cut into blocks.
func splitMarkdown(ls lines) []Chunk {
	var out []Chunk
	start, name := 0, ""
	flush := func(end int) {
		if end > start {
			out = append(out, splitLines(ls, start, end, KindSection, name)...)
		}
	}
	fence := ""
	for i := range ls.n() {
		l := ls.line(i)
		t := strings.TrimLeft(l, " ")
		if len(l)-len(t) > 3 {
			continue // indented code
		}
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = t[:3]
		default:
			if h, ok := heading(t); ok {
				flush(i)
				start, name = i, h
			}
		}
	}
	flush(ls.n())
	return out
}

// heading returns the text of an ATX heading line.
func heading(l string) (string, bool) {
	n := 0
	for n < len(l) && l[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(l) && l[n] != ' ' && l[n] != '\t') {
		return "", false
	}
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(l[n:]), "#")), true
}
