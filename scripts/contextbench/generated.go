package main

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path"
	"slices"
	"strings"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/symbols"
)

// A generated question is made in the manner of CodeSearchNet from the
// corpus itself: the first sentence of a declaration's doc comment (as
// shared/symbols reads it) is the question, the declaration is the
// answer, and the doc comment is blanked out of the text indexed for the
// run (see strip), so the question's words are not found in the comment
// that became it. The rules:
//
//   - declarations: functions, methods, classes, interfaces, types and
//     enums, outside tests and test data;
//   - the declaration's name is dropped where it opens the sentence (Go's
//     convention: "ReadMIMEHeader reads a MIME-style header" asks "reads
//     a MIME-style header"), so a question does not name its answer;
//   - a question needs minQueryWords content words (the keyword
//     baseline's words), must not start with "Deprecated" and must be the
//     first sentence of one declaration only (a sentence several
//     declarations share, "String returns the string form", has no single
//     answer);
//   - the question's file chooses its half by a fixed hash of its path
//     (FNV-1a, even: tuning, odd: held-out), so every question about a
//     file is in the same half; each half of each corpus is sampled to at
//     most -pairs questions with a fixed seed.
//
// A generated question is "paraphrase-like" when it shares no index term
// (contextindex.Tokens, so after camelCase splitting and stemming) with
// its declaration's text once the doc comment is blanked.

// minQueryWords is the fewest content words a generated question has.
const minQueryWords = 3

// pairSeed seeds the sampling of generated questions.
const pairSeed = 29

// target is a generated question's answer: a declaration.
type target struct {
	path string
	line int // the line of its name
	name string
}

// candidate is a generated question before sampling.
type candidate struct {
	query    string
	target   target
	doc      [2]int // the doc comment's bytes in the file
	heldOut  bool
	noShared bool
}

// generatedKinds are the kinds of declaration questions are made for.
var generatedKinds = []symbols.Kind{symbols.Function, symbols.Method, symbols.Class, symbols.Interface, symbols.Type, symbols.Enum}

// candidates returns the generated questions of files, sorted by path and
// line, and how many declarations with a doc comment they were made from.
func candidates(files []*repo.File) ([]candidate, int) {
	var out []candidate
	documented := 0
	for _, f := range files {
		if isTestPath(f.Path) || !symbols.Supports(f.Path) {
			continue
		}
		text := f.Text()
		sf := symbols.Parse(f.Path, text)
		if sf == nil {
			continue
		}
		for _, s := range sf.Symbols {
			if s.DocFrom == s.DocTo || !slices.Contains(generatedKinds, s.Kind) {
				continue
			}
			documented++
			q := docQuestion(sf.Doc(s), s.Name)
			if len(contentWords(q)) < minQueryWords || strings.HasPrefix(q, "Deprecated") {
				continue
			}
			// The declaration's text, its doc comment blanked (a Python
			// docstring lies inside, a Go line comment may follow it).
			from, to := min(s.From, s.DocFrom), max(s.To, s.DocTo)
			body := blank(text[from:to], s.DocFrom-from, s.DocTo-from)
			out = append(out, candidate{
				query:    q,
				target:   target{path: f.Path, line: lineAt(text, s.NameAt), name: s.Name},
				doc:      [2]int{s.DocFrom, s.DocTo},
				heldOut:  heldOut(f.Path),
				noShared: !sharesTerm(q, body),
			})
		}
	}
	// A sentence several declarations share has no single answer.
	count := map[string]int{}
	for _, c := range out {
		count[strings.ToLower(c.query)]++
	}
	out = slices.DeleteFunc(out, func(c candidate) bool { return count[strings.ToLower(c.query)] > 1 })
	return out, documented
}

// docQuestion makes a declaration's question from the first sentence of its
// doc comment: the name dropped where it opens the sentence (after "A",
// "An" or "The", too), and the trailing period.
func docQuestion(sentence, name string) string {
	words := strings.Fields(sentence)
	switch {
	case len(words) > 1 && words[0] == name:
		words = words[1:]
	case len(words) > 2 && words[1] == name && slices.Contains([]string{"A", "An", "The"}, words[0]):
		words = words[2:]
	}
	return strings.TrimSuffix(strings.Join(words, " "), ".")
}

// heldOut says which half a file's questions are in, by a fixed hash of
// its path.
func heldOut(p string) bool {
	h := fnv.New32a()
	h.Write([]byte(p))
	return h.Sum32()%2 == 1
}

// sample keeps at most n candidates of each half, chosen with a fixed
// seed, in their order.
func sample(cs []candidate, n int) []candidate {
	rng := rand.New(rand.NewPCG(pairSeed, pairSeed))
	var out []candidate
	for _, held := range []bool{false, true} {
		var idx []int
		for i, c := range cs {
			if c.heldOut == held {
				idx = append(idx, i)
			}
		}
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		idx = idx[:min(n, len(idx))]
		slices.Sort(idx)
		for _, i := range idx {
			out = append(out, cs[i])
		}
	}
	return out
}

// stripped returns the files' contents with the doc comments of the
// sampled questions blanked (see blank), for the index and the keyword
// baseline of the run.
func stripped(files []*repo.File, cs []candidate) []contextindex.File {
	docs := map[string][][2]int{}
	for _, c := range cs {
		docs[c.target.path] = append(docs[c.target.path], c.doc)
	}
	out := make([]contextindex.File, 0, len(files))
	for _, f := range files {
		text := f.Text()
		for _, d := range docs[f.Path] {
			text = text[:d[0]] + blank(text[d[0]:d[1]], 0, d[1]-d[0]) + text[d[1]:]
		}
		out = append(out, contextindex.File{Path: f.Path, Content: []byte(text), ModTime: f.ModTime})
	}
	return out
}

// blank returns text with its bytes [from, to) made spaces, line ends
// kept, so lines and offsets stay; a Python docstring becomes the empty
// string "" (a body that was only its docstring still parses).
func blank(text string, from, to int) string {
	b := []byte(text)
	for i := from; i < to; i++ {
		if b[i] != '\n' && b[i] != '\r' {
			b[i] = ' '
		}
	}
	if q := text[from:to]; to-from >= 2 && strings.ContainsAny(q[:min(len(q), 2)], `"'`) {
		b[from], b[from+1] = '"', '"'
	}
	return string(b)
}

// sharesTerm reports whether query and text have an index term in
// common.
func sharesTerm(query, text string) bool {
	terms := map[string]bool{}
	for _, t := range contextindex.Tokens(text) {
		terms[t] = true
	}
	for _, t := range contextindex.QueryTerms(query) {
		if terms[t] {
			return true
		}
	}
	return false
}

// lineAt returns the line (from 1) of byte offset at in text.
func lineAt(text string, at int) int { return strings.Count(text[:at], "\n") + 1 }

// isTestPath reports whether a file is a test or test data (a testdata,
// test or tests folder; x_test.go, test_x.py).
func isTestPath(p string) bool {
	dir, name := path.Split(p)
	for seg := range strings.SplitSeq(strings.Trim(dir, "/"), "/") {
		if seg == "testdata" || seg == "test" || seg == "tests" {
			return true
		}
	}
	return strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "test_")
}

// generatedItems turns sampled candidates into the items of the classes
// "<corpus>-generated" and "<corpus>-paraphrase" (its questions that
// share no term with their answer).
func generatedItems(corpus string, cs []candidate) []item {
	var out []item
	for _, c := range cs {
		it := item{classes: []string{corpus + "-generated"}, text: c.query, relevant: []string{c.target.path}, target: c.target, heldOut: c.heldOut}
		if c.noShared {
			it.classes = append(it.classes, corpus+"-paraphrase")
		}
		out = append(out, it)
	}
	return out
}

// describeCandidates says how many questions a corpus gave.
func describeCandidates(name string, documented int, all, sampled []candidate) string {
	halves := [2]int{}
	noShared := 0
	for _, c := range sampled {
		if c.heldOut {
			halves[1]++
		} else {
			halves[0]++
		}
		if c.noShared {
			noShared++
		}
	}
	return fmt.Sprintf("%s: %d documented declarations, %d questions, sampled %d tuning + %d held-out (%d share no term with their answer)",
		name, documented, len(all), halves[0], halves[1], noShared)
}
