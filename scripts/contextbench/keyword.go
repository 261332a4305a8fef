package main

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The keyword baseline ranks files by the idf-weighted counts of a
// question's words, as `rg --count-matches --ignore-case --word-regexp`
// counts them: score(file) = Σ over the question's content words of
// ln(1 + N/df) × (1 + ln count). The counts are taken in process (one pass
// over the files for every word of every question: thousands of generated
// questions would take thousands of rg runs); TestKeywordCountsMatchRg
// checks them against rg.

// keywordCounts are, per word, the files it occurs in as a whole word,
// ignoring case, and how often.
type keywordCounts struct {
	n      int                    // files
	counts map[string]map[int]int // word → file number → matches
	paths  []string
}

// countWords counts the whole-word occurrences of words in each text
// (paths[i] has texts[i]): a word is a run of word characters as rg's \w
// has them (letters, digits, marks, connector punctuation such as "_"),
// compared lower-cased.
func countWords(paths, texts []string, words []string) *keywordCounts {
	kc := &keywordCounts{n: len(paths), counts: map[string]map[int]int{}, paths: paths}
	want := map[string]bool{}
	for _, w := range words {
		want[w] = true
	}
	var buf []byte
	for fi, text := range texts {
		for i := 0; i < len(text); {
			start, ascii := i, true
			for i < len(text) {
				if c := text[i]; c < utf8.RuneSelf {
					if !isRgWord(rune(c)) {
						break
					}
					i++
					continue
				}
				r, n := utf8.DecodeRuneInString(text[i:])
				if !isRgWord(r) {
					break
				}
				ascii = false
				i += n
			}
			if i == start {
				_, n := utf8.DecodeRuneInString(text[i:])
				i += n
				continue
			}
			if ascii {
				buf = append(buf[:0], text[start:i]...)
				for j, c := range buf {
					if 'A' <= c && c <= 'Z' {
						buf[j] = c + 'a' - 'A'
					}
				}
			} else {
				buf = append(buf[:0], strings.ToLower(text[start:i])...)
			}
			if !want[string(buf)] {
				continue
			}
			w := string(buf)
			c := kc.counts[w]
			if c == nil {
				c = map[int]int{}
				kc.counts[w] = c
			}
			c[fi]++
		}
	}
	return kc
}

// isRgWord says whether r is a word character of rg's \w.
func isRgWord(r rune) bool {
	return r < utf8.RuneSelf && (r == '_' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') ||
		r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || unicode.Is(unicode.Pc, r))
}

// rank returns the files best first for a question, at most 2×depth.
func (kc *keywordCounts) rank(question string) []string {
	score := map[int]float64{}
	for _, w := range uniq(contentWords(question)) {
		c := kc.counts[w]
		if len(c) == 0 {
			continue
		}
		idf := math.Log(1 + float64(kc.n)/float64(len(c)))
		for fi, k := range c {
			score[fi] += idf * (1 + math.Log(float64(k)))
		}
	}
	ranked := make([]int, 0, len(score))
	for fi := range score {
		ranked = append(ranked, fi)
	}
	slices.SortFunc(ranked, func(a, b int) int {
		if score[a] != score[b] {
			if score[a] > score[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(kc.paths[a], kc.paths[b])
	})
	out := make([]string, 0, 2*depth)
	for _, fi := range ranked[:min(len(ranked), 2*depth)] {
		out = append(out, kc.paths[fi])
	}
	return out
}

// stopWords are left out of the baseline's query words: English function
// words.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about above after again against all also am an and any are as at
		be because been before being below between both but by can could did do does doing done down during
		each either else ever every few for from further get gets got had has have having he her here hers
		him his how however i if in into is it its itself just let lets like made make makes many may me
		might more most much must my no nor not now of off on once one only or other our out over own
		same she should so some such than that the their them then there these they this those though
		through to too under until up upon us use used uses using very via was we were what whatever when
		where whether which while who whom whose why will with within without would yet you your`) {
		stopWords[w] = true
	}
}

// wordRE finds words: runs of letters and digits.
var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

// contentWords returns the baseline's words of a question: lower-cased
// runs of letters and digits of three characters or more, stop words
// left out.
func contentWords(q string) []string {
	var out []string
	for _, w := range wordRE.FindAllString(strings.ToLower(q), -1) {
		if len([]rune(w)) >= 3 && !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

func uniq(words []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range words {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}
