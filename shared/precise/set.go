package precise

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Repository is one repository's indexes, oldest first: one per indexer
// or project, and overlays made by re-indexing what changed. A document
// in a later index hides the same path in every earlier one: its
// occurrences, the references and definitions the earlier ones have in
// it, and what they say there of symbols.
type Repository struct {
	Name    string
	Indexes []*Index
}

// Set answers over several repositories of one tenant: the home
// repository, which positions and paths are in and local symbols belong
// to, and others, which answers about global symbols include (a symbol
// defined in one repository and used in another links through SCIP's
// global symbols, which name the package and its version).
//
// The caller builds a Set from what the call may read, and names the
// tenant: NewSet refuses an index made for another tenant (see
// WriterOptions.Tenant), so an index of one tenant never answers
// another's call.
type Set struct {
	tenant string
	repos  []Repository // home first
}

// NewSet makes the Set of tenant's home repository and others.
func NewSet(tenant string, home Repository, others ...Repository) (*Set, error) {
	if tenant == "" {
		return nil, errors.New("precise: a Set needs the tenant it answers")
	}
	s := &Set{tenant: tenant, repos: append([]Repository{home}, others...)}
	seen := map[string]bool{}
	for _, r := range s.repos {
		if seen[r.Name] {
			return nil, fmt.Errorf("precise: repository %q is in the Set twice", r.Name)
		}
		seen[r.Name] = true
		for _, ix := range r.Indexes {
			if ix == nil {
				return nil, fmt.Errorf("precise: repository %q has a nil index", r.Name)
			}
			if t := ix.Tenant(); t != "" && t != tenant {
				return nil, fmt.Errorf("%w: an index of repository %q belongs to another tenant", ErrTenant, r.Name)
			}
		}
	}
	return s, nil
}

// Tenant is the tenant the Set answers.
func (s *Set) Tenant() string { return s.tenant }

// hidden says which documents of repository r's index i later ones hide.
func (s *Set) hidden(r, i int) hiddenIn {
	later := s.repos[r].Indexes[i+1:]
	if len(later) == 0 {
		return nil
	}
	return func(path string) bool {
		return slices.ContainsFunc(later, func(ix *Index) bool { return ix.has(path) })
	}
}

// holder is the index of the home repository that answers for path: the
// latest that has it.
func (s *Set) holder(path string) *Index {
	home := s.repos[0].Indexes
	for i := len(home) - 1; i >= 0; i-- {
		if home[i].has(path) {
			return home[i]
		}
	}
	return nil
}

// inHome names the home repository in occurrences.
func (s *Set) inHome(occs []Occurrence) []Occurrence {
	for i := range occs {
		occs[i].Repo = s.repos[0].Name
	}
	return occs
}

// Document describes path in the home repository (the latest index's).
func (s *Set) Document(path string) (DocInfo, bool) {
	if ix := s.holder(path); ix != nil {
		return ix.Document(path)
	}
	return DocInfo{}, false
}

// At is Index.At in the home repository.
func (s *Set) At(ctx context.Context, path string, line, col int) ([]Occurrence, error) {
	ix := s.holder(path)
	if ix == nil {
		return nil, nil
	}
	occs, err := ix.At(ctx, path, line, col)
	return s.inHome(occs), err
}

// Occurrences is Index.Occurrences in the home repository.
func (s *Set) Occurrences(ctx context.Context, path string, fromLine, toLine int) ([]Occurrence, error) {
	ix := s.holder(path)
	if ix == nil {
		return nil, nil
	}
	occs, err := ix.Occurrences(ctx, path, fromLine, toLine)
	return s.inHome(occs), err
}

// localHolder is the index a local symbol's document is in.
func (s *Set) localHolder(symbol string) *Index {
	if _, path, ok := splitLocal(symbol); ok {
		return s.holder(path)
	}
	return nil
}

// member is an index of the Set with what hides its documents.
type member struct {
	repo   int
	ix     *Index
	hidden hiddenIn
}

// members lists the indexes of repositories from..to-1, each
// repository's latest first.
func (s *Set) members(from, to int) []member {
	var out []member
	for r := from; r < to; r++ {
		idx := s.repos[r].Indexes
		for i := len(idx) - 1; i >= 0; i-- {
			out = append(out, member{r, idx[i], s.hidden(r, i)})
		}
	}
	return out
}

// Symbol is Index.Symbol over the Set: the information of the home
// repository's latest index that has it (another's, or the external
// symbols', when none does); the definitions and relationships of all.
func (s *Set) Symbol(ctx context.Context, symbol string) (SymbolInfo, bool, error) {
	if isLocal(symbol) {
		ix := s.localHolder(symbol)
		if ix == nil {
			return SymbolInfo{}, false, nil
		}
		info, ok, err := ix.Symbol(ctx, symbol)
		s.inHome(info.Definitions)
		return info, ok, err
	}
	var out SymbolInfo
	found, haveInfo := false, false
	for _, m := range s.members(0, len(s.repos)) {
		e, ok, err := m.ix.lookup(ctx, symbol)
		if err != nil {
			return SymbolInfo{}, false, err
		}
		if !ok {
			continue
		}
		info, kept := m.ix.symbolInfo(e, m.hidden)
		if kept && (!haveInfo || out.External && !info.External) {
			defs, rels := out.Definitions, out.Relationships
			out, haveInfo = info, true
			out.Definitions, out.Relationships = defs, rels
		}
		found = true
		for _, d := range info.Definitions {
			d.Repo = s.repos[m.repo].Name
			out.Definitions = append(out.Definitions, d)
		}
		for _, r := range info.Relationships {
			if !slices.Contains(out.Relationships, r) {
				out.Relationships = append(out.Relationships, r)
			}
		}
	}
	out.Symbol = symbol
	slices.SortStableFunc(out.Definitions, s.compareOccurrences)
	return out, found, nil
}

// compareOccurrences orders occurrences as pages give them: repository
// (home first, then the others as given), path, position.
func (s *Set) compareOccurrences(a, b Occurrence) int {
	return cmp.Or(cmp.Compare(s.repoIndex(a.Repo), s.repoIndex(b.Repo)), strings.Compare(a.Path, b.Path), compareRanges(a.Range, b.Range))
}

// repoIndex is a repository's place in the Set ("" is home; -1 none).
func (s *Set) repoIndex(name string) int {
	if name == "" {
		return 0
	}
	return slices.IndexFunc(s.repos, func(r Repository) bool { return r.Name == name })
}

// References is Index.References over the Set: the home repository's
// occurrences, then each other repository's (global symbols only), each
// repository's in (path, line, column) order; after.Repo says which
// repository a page ended in.
func (s *Set) References(ctx context.Context, symbol string, after Location, limit int) ([]Occurrence, bool, error) {
	limit = pageLimit(limit)
	if isLocal(symbol) {
		ix := s.localHolder(symbol)
		if ix == nil || s.repoIndex(after.Repo) != 0 {
			return nil, false, nil
		}
		occs, more, err := ix.References(ctx, symbol, after, limit)
		return s.inHome(occs), more, err
	}
	start := s.repoIndex(after.Repo)
	if start < 0 {
		return nil, false, fmt.Errorf("precise: no repository %q in the Set", after.Repo)
	}
	var out []Occurrence
	for r := start; r < len(s.repos); r++ {
		from := after
		if r != start {
			from = Location{}
		}
		page, more, err := s.repoRefs(ctx, r, symbol, from, limit-len(out))
		if err != nil {
			return nil, false, err
		}
		out = append(out, page...)
		if more {
			return out, true, nil
		}
	}
	return out, false, nil
}

// repoRefs is a page of repository r's references: the first need of its
// indexes' pages merged (need 0 only asks whether there is one).
func (s *Set) repoRefs(ctx context.Context, r int, symbol string, after Location, need int) ([]Occurrence, bool, error) {
	var all []Occurrence
	more := false
	for _, m := range s.members(r, r+1) {
		e, ok, err := m.ix.lookup(ctx, symbol)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			continue
		}
		page, mm, err := m.ix.refs(ctx, e, after, need, m.hidden)
		if err != nil {
			return nil, false, err
		}
		all, more = append(all, page...), more || mm
	}
	for i := range all {
		all[i].Repo = s.repos[r].Name
	}
	slices.SortStableFunc(all, s.compareOccurrences)
	if len(all) > need {
		return all[:need], true, nil
	}
	return all, more, nil
}

// Implementations is Index.Implementations over the Set (for a global
// symbol, every repository's).
func (s *Set) Implementations(ctx context.Context, symbol string) (implementedBy, implements []string, err error) {
	if isLocal(symbol) {
		ix := s.localHolder(symbol)
		if ix == nil {
			return nil, nil, nil
		}
		return ix.Implementations(ctx, symbol)
	}
	for _, m := range s.members(0, len(s.repos)) {
		e, ok, err := m.ix.lookup(ctx, symbol)
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			continue
		}
		by, of, err := m.ix.impls(ctx, e, m.hidden)
		if err != nil {
			return nil, nil, err
		}
		implementedBy, implements = append(implementedBy, by...), append(implements, of...)
	}
	slices.Sort(implementedBy)
	slices.Sort(implements)
	return slices.Compact(implementedBy), slices.Compact(implements), nil
}
