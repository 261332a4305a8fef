package codechunk

import (
	"slices"

	"github.com/toolshed/toolshed/shared/language"
	"github.com/toolshed/toolshed/shared/symbols"
)

// splitKinds are the kinds of symbol a long declaration is split at: a
// class of more than targetLines lines becomes its header (the lines
// before its first member of these kinds) and a chunk per member.
var splitKinds = []symbols.Kind{symbols.Function, symbols.Method, symbols.Class, symbols.Interface,
	symbols.Type, symbols.Enum, symbols.Module}

// valueKinds are the kinds of symbol whose small neighbours are merged
// into one chunk (a header of #defines, a module's constants), up to
// targetLines lines, named by the first: like a Go const ( ... ) group.
var valueKinds = []symbols.Kind{symbols.Constant, symbols.Variable, symbols.Macro, symbols.Field}

// maxLead is how many lines no declaration holds join the declaration
// right below them.
const maxLead = 2

// decl is a declaration's lines [from, to) (0-based), before it is a
// chunk.
type decl struct {
	from, to int
	kind     symbols.Kind
	name     string
}

// splitDeclarations cuts a file shared/symbols reads into one chunk per
// top-level declaration with its doc comment, named by its kind and name
// ("class Reader", "method Reader.read", "function spool"; a Go method is
// named by its receiver's type). A declaration longer than targetLines
// with members (a class and its methods) is split into its header and a
// chunk per member, nested ones alike; small neighbouring constants,
// variables and macros share a chunk (a Go const ( ... ) group, a header's
// #defines). Lines no declaration holds (imports, top-level statements)
// are cut into blocks, those without a letter or digit ("}") dropped, and
// up to maxLead of them right above a declaration ("impl Point {") join
// it; in Go they are dropped (only the package clause, imports and file
// comments lie there: a package's doc is a declaration of its own). A
// declaration longer than maxLines is cut into blocks too, each with its
// name.
func splitDeclarations(ls lines, f *symbols.File) []Chunk {
	loose := f.Language != language.Go
	var out []Chunk
	at := 0 // the first line no chunk holds yet
	for _, d := range declarations(ls, f) {
		d.from = max(d.from, at)
		if d.from >= d.to {
			continue
		}
		switch {
		case !hasWord(ls, at, d.from):
		case d.from-at <= maxLead && !ls.blank(d.from-1):
			d.from = at // "impl Point {" right above a method: its context
		case loose:
			out = append(out, splitLines(ls, at, d.from, KindBlock, "")...)
		}
		out = append(out, declChunks(ls, d)...)
		at = d.to
	}
	if loose && hasWord(ls, at, ls.n()) {
		out = append(out, splitLines(ls, at, ls.n(), KindBlock, "")...)
	}
	return out
}

// declChunks makes d's lines, blank ones at either end dropped, one
// chunk, or blocks when they are more than maxLines.
func declChunks(ls lines, d decl) []Chunk {
	for d.from < d.to && ls.blank(d.from) {
		d.from++
	}
	for d.to > d.from && ls.blank(d.to-1) {
		d.to--
	}
	switch {
	case d.from == d.to:
		return nil
	case d.to-d.from > maxLines:
		return splitLines(ls, d.from, d.to, string(d.kind), d.name)
	}
	return []Chunk{ls.chunk(d.from, d.to, string(d.kind), d.name)}
}

// declarations lists the lines of f's declarations in order: each
// top-level one with its doc comment, a long one with members split into
// its header and its members, neighbouring values merged (mergeValues).
func declarations(ls lines, f *symbols.File) []decl {
	members := make([][]int, len(f.Symbols))
	var top []int
	for i, s := range f.Symbols {
		if s.Parent < 0 {
			top = append(top, i)
		} else if slices.Contains(splitKinds, s.Kind) {
			members[s.Parent] = append(members[s.Parent], i)
		}
	}
	var decls []decl
	var add func(i int)
	add = func(i int) {
		s := f.Symbols[i]
		d := decl{from: ls.lineOf(s.From), to: s.End, kind: s.Kind, name: declName(s)}
		if s.DocFrom < s.DocTo && s.DocFrom < s.From {
			d.from = ls.lineOf(s.DocFrom)
		}
		if d.to-d.from <= targetLines || len(members[i]) == 0 {
			decls = append(decls, d)
			return
		}
		first := f.Symbols[members[i][0]]
		d.to = ls.lineOf(min(first.From, docStart(first)))
		decls = append(decls, d)
		for _, m := range members[i] {
			add(m)
		}
	}
	for _, i := range top {
		add(i)
	}
	return mergeValues(ls, decls)
}

// mergeValues merges neighbouring small declarations of valueKinds (only
// blank lines between them) into the first, up to targetLines lines.
func mergeValues(ls lines, decls []decl) []decl {
	out := decls[:0]
	for _, d := range decls {
		if n := len(out); n > 0 {
			last := &out[n-1]
			if slices.Contains(valueKinds, last.kind) && slices.Contains(valueKinds, d.kind) &&
				d.to-last.from <= targetLines && d.from >= last.to && !hasWord(ls, last.to, d.from) {
				last.to = d.to
				continue
			}
		}
		out = append(out, d)
	}
	return out
}

// declName is a chunk's name for a symbol: its kind and its name, after
// its container's ("method Reader.read").
func declName(s symbols.Symbol) string {
	if s.Container != "" {
		return string(s.Kind) + " " + s.Container + "." + s.Name
	}
	return string(s.Kind) + " " + s.Name
}

// docStart is where a symbol begins with the doc comment above it.
func docStart(s symbols.Symbol) int {
	if s.DocFrom < s.DocTo {
		return min(s.From, s.DocFrom)
	}
	return s.From
}

// lineOf returns the line (0-based) holding byte offset at.
func (ls lines) lineOf(at int) int {
	i, found := slices.BinarySearch(ls.starts, at)
	if found {
		return i
	}
	return i - 1
}

// hasWord reports whether lines [from, to) hold a letter or digit.
func hasWord(ls lines, from, to int) bool {
	if from >= to {
		return false
	}
	for _, c := range []byte(ls.text[ls.starts[from]:ls.end(to-1)]) {
		if c >= 0x80 || isAlnum(c) {
			return true
		}
	}
	return false
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
