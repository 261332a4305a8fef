package navcheck

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/latency"
)

// Location is a place in a project: a file's path relative to the
// project, slash-separated, and a 1-based line and byte column (as every
// answer gives them).
type Location struct {
	Path         string
	Line, Column int
}

func (l Location) String() string { return fmt.Sprintf("%s:%d:%d", l.Path, l.Line, l.Column) }

// Truth is what a compiler says of a sample of a project's identifiers.
type Truth struct {
	// Files are the files compared (the project's non-test files): an
	// answer's places in other files are not counted, on either side.
	Files map[string]bool
	Uses  []Use
	// Symbols are sampled symbols, each with every use the compiler
	// knows of it in Files.
	Symbols []Symbol
	// Excluded counts the identifiers left out of the sample, by why
	// ("package name", "label", "defined outside the project", ...).
	Excluded map[string]int
	// DefinitionTimes and ReferenceTimes are how long the compiler
	// took to answer each question, where it answers one at a time (the
	// TypeScript language service): the precise answers' baseline.
	DefinitionTimes, ReferenceTimes []time.Duration
}

// Use is an identifier that refers to a symbol defined elsewhere, and
// the definition(s) the compiler gives it.
type Use struct {
	At          Location
	Name        string
	Definitions []Location
}

// Symbol is a symbol whose references are compared: a position of it
// (a use, or its definition) where the references are asked for, and
// every use of it (its definitions left out).
type Symbol struct {
	Name  string // as the compiler would print it, e.g. "(*os.File).Close"
	Kind  string // as the compiler calls it: "method", "type parameter", …
	Group string // the ambiguous name it was sampled for, if any
	At    Location
	Uses  []Location
}

// Navigator answers the two questions compared.
type Navigator interface {
	// Definitions returns the definitions of the symbol (or symbols)
	// at a position.
	Definitions(ctx context.Context, at Location) ([]Location, error)
	// References returns every reference to the symbol at a position,
	// all pages, its definitions left out.
	References(ctx context.Context, at Location) ([]Location, error)
}

// Result is how a Navigator's answers compare with a Truth.
type Result struct {
	Uses, DefinitionsRight int
	// TruthRefs are the compiler's uses of the sampled symbols,
	// Answered the navigator's references (in Files), Matched those in
	// both.
	Symbols, TruthRefs, Answered, Matched int
	DefinitionTimes, ReferenceTimes       []time.Duration
	// Outside counts references answered in files not compared.
	Outside int
	// DefinitionMisses and ReferenceMisses describe the answers that
	// differ, for a sample to print.
	DefinitionMisses, ReferenceMisses []string
	// Groups holds, for each ambiguous name, the result of its symbols;
	// Kinds, for each kind of symbol, the result of those of that kind
	// (to tell where a gap is).
	Groups, Kinds map[string]*Result
}

// Precision is the share of the answered references that the compiler
// has too; Recall the share of the compiler's that were answered.
func (r *Result) Precision() float64 { return ratio(r.Matched, r.Answered) }
func (r *Result) Recall() float64    { return ratio(r.Matched, r.TruthRefs) }

// DefinitionRate is the share of uses whose definition was answered
// right.
func (r *Result) DefinitionRate() float64 { return ratio(r.DefinitionsRight, r.Uses) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// Compare asks nav for the definition at every use of t, and for the
// references at every symbol's position, and counts the answers against
// t. A failed call is an error: a navigator that cannot answer is not
// measured.
func Compare(ctx context.Context, t *Truth, nav Navigator) (*Result, error) {
	r := &Result{Groups: map[string]*Result{}, Kinds: map[string]*Result{}}
	for _, u := range t.Uses {
		start := time.Now()
		defs, err := nav.Definitions(ctx, u.At)
		if err != nil {
			return nil, fmt.Errorf("definition at %s: %w", u.At, err)
		}
		r.DefinitionTimes = append(r.DefinitionTimes, time.Since(start))
		r.Uses++
		if slices.ContainsFunc(u.Definitions, func(l Location) bool { return slices.Contains(defs, l) }) {
			r.DefinitionsRight++
		} else {
			r.DefinitionMisses = append(r.DefinitionMisses, fmt.Sprintf("definition of %s at %s: want %v, got %v", u.Name, u.At, u.Definitions, defs))
		}
	}
	for _, s := range t.Symbols {
		start := time.Now()
		refs, err := nav.References(ctx, s.At)
		if err != nil {
			return nil, fmt.Errorf("references at %s: %w", s.At, err)
		}
		took := time.Since(start)
		for _, into := range []*Result{r, part(r.Groups, s.Group), part(r.Kinds, s.Kind)} {
			if into != nil {
				into.ReferenceTimes = append(into.ReferenceTimes, took)
				into.addReferences(t, s, refs)
			}
		}
	}
	return r, nil
}

// part is the result of the symbols of one group or kind (nil for none).
func part(parts map[string]*Result, name string) *Result {
	if name == "" {
		return nil
	}
	if parts[name] == nil {
		parts[name] = &Result{}
	}
	return parts[name]
}

// addReferences counts one symbol's answered references against its uses.
func (r *Result) addReferences(t *Truth, s Symbol, refs []Location) {
	want := map[Location]bool{}
	for _, u := range s.Uses {
		want[u] = true
	}
	got := map[Location]bool{}
	var extra []Location
	for _, l := range refs {
		if !t.Files[l.Path] {
			r.Outside++
			continue
		}
		if got[l] {
			continue
		}
		got[l] = true
		if want[l] {
			r.Matched++
		} else {
			extra = append(extra, l)
		}
	}
	var missing []Location
	for _, u := range s.Uses {
		if !got[u] {
			missing = append(missing, u)
		}
	}
	r.Symbols++
	r.TruthRefs += len(want)
	r.Answered += len(got)
	if len(extra)+len(missing) > 0 {
		r.ReferenceMisses = append(r.ReferenceMisses, fmt.Sprintf("references of %s at %s: %d answered, %d uses; not uses: %s; missing: %s",
			s.Name, s.At, len(got), len(want), some(extra), some(missing)))
	}
}

// some prints a few locations and how many more there are.
func some(ls []Location) string {
	const shown = 3
	var parts []string
	for i, l := range ls {
		if i == shown {
			parts = append(parts, fmt.Sprintf("… %d more", len(ls)-shown))
			break
		}
		parts = append(parts, l.String())
	}
	if parts == nil {
		return "none"
	}
	return strings.Join(parts, " ")
}

// Summary is one line of the figures: definitions right, references'
// precision and recall, and the p50 of each kind of call.
func (r *Result) Summary() string {
	return fmt.Sprintf("definition right %d/%d (%.4f), p50 %s ms; references of %d symbols: precision %.4f (%d/%d), recall %.4f (%d/%d), p50 %s ms",
		r.DefinitionsRight, r.Uses, r.DefinitionRate(), latency.Ms(latency.Percentile(r.DefinitionTimes, 50)),
		r.Symbols, r.Precision(), r.Matched, r.Answered, r.Recall(), r.Matched, r.TruthRefs,
		latency.Ms(latency.Percentile(r.ReferenceTimes, 50)))
}
