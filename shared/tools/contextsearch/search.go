package contextsearch

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolshed/toolshed/shared/codechunk"
	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// The messages the contract names.
const (
	msgQueryTooShort = "Query must be at least 3 characters"
	msgNothingFound  = "No embeddings found. Run initial session to generate context."
	msgFallback      = "Use grep_codebase for text search"
)

// Limits.
const (
	minQueryChars = 3
	// queryEmbedTimeout bounds the query embedding, so that a slow
	// embedding service still leaves time to answer lexically.
	queryEmbedTimeout = 2 * time.Second
	// maxCodeContent cuts a code result's content; its id names the lines
	// to read the rest.
	maxCodeContent = 2000
)

type searchInput struct {
	Query  string `json:"query"`
	Type   string `json:"type"`
	Module string `json:"module"`
	Limit  int    `json:"limit"`
	Full   bool   `json:"full"`
	Repo   string `json:"repo"` // "": the default repository
}

type resultJSON struct {
	ID      string  `json:"id"`
	Type    string  `json:"type"`
	Content string  `json:"content"`
	Module  *string `json:"module"`
	Session *string `json:"session"`
	Date    *string `json:"date"`
	Score   float64 `json:"score"`
	Source  string  `json:"source"`
	// Code: the file and the lines content holds.
	Path      string `json:"path,omitempty"`
	StartLine int    `json:"startLine,omitempty"`
	EndLine   int    `json:"endLine,omitempty"`
}

type searchOutput struct {
	Results    []resultJSON      `json:"results"`
	Query      string            `json:"query"`
	TotalFound int               `json:"totalFound"`
	HasMore    bool              `json:"hasMore"`
	SearchTime int64             `json:"searchTime"`
	Mode       contextindex.Mode `json:"mode"`
	Degraded   bool              `json:"degraded"`
	Notice     string            `json:"notice,omitempty"`
	Index      *indexJSON        `json:"index,omitempty"`
}

// StateLoading is the index state of a stored index still being read
// (contextindex has the other states).
const StateLoading contextindex.State = "loading"

// indexJSON says how far the code index is.
type indexJSON struct {
	State        contextindex.State `json:"state"`
	FilesIndexed int                `json:"filesIndexed"`
	FilesTotal   int                `json:"filesTotal"`
	Chunks       int                `json:"chunks"`
	Vectors      int                `json:"vectors"`
	Commit       string             `json:"commit,omitempty"`
	// Pending: chunks of the index still waiting for a vector.
	Pending int        `json:"pending,omitempty"`
	Build   *buildJSON `json:"build,omitempty"`
}

// buildJSON is the indexer's build of a newer snapshot.
type buildJSON struct {
	Commit      string    `json:"commit"`
	Files       int       `json:"files"`
	Batches     int       `json:"batches"`
	BatchesDone int       `json:"batchesDone"`
	Chunks      int       `json:"chunks"`
	Embedded    int       `json:"embedded"`
	Failed      int       `json:"failed"`
	Started     time.Time `json:"started"`
	Updated     time.Time `json:"updated"`
}

// buildJSONOf renders a build record (nil for none).
func buildJSONOf(b *indexfile.Build) *buildJSON {
	if b == nil {
		return nil
	}
	t := indexfile.Totals(b.Done)
	return &buildJSON{Commit: b.Commit, Files: b.Files, Batches: b.Batches, BatchesDone: len(b.Done), Chunks: t.Chunks,
		Embedded: t.Embedded, Failed: t.Failed, Started: b.Started.UTC(), Updated: b.Updated.UTC()}
}

// search answers one context_search call.
func (s *Service) search(ctx context.Context, call toolkit.Call, in searchInput) (toolkit.Result, error) {
	start := time.Now()
	query := strings.TrimSpace(in.Query)
	if n := utf8.RuneCountInString(query); n < minQueryChars {
		return toolkit.Result{}, toolerr.New(toolerr.InvalidInput, msgQueryTooShort).
			With("errors", []toolerr.FieldError{{Field: "query", Message: fmt.Sprintf("must be at least %d characters long, got %d", minQueryChars, n)}})
	}
	r, err := reposcope.Resolve(call.Tenant, call.Repos, in.Repo, s.code.defaultRepo())
	if err != nil {
		return toolkit.Result{}, err
	}
	corpus, index, stale, err := s.corpus(ctx, r, in.Repo != "")
	if err != nil {
		return toolkit.Result{}, fmt.Errorf("context index of %s: %w", r, err)
	}
	if corpus.Len() == 0 && (index == nil || index.State == contextindex.StateReady) {
		return toolkit.Result{}, toolerr.New(toolerr.ResourceNotFound, msgNothingFound).
			With("fallback", msgFallback).
			With("action", "Record discoveries with write_memory_entry; embeddings are generated in the background")
	}
	out := searchOutput{Query: in.Query, Results: []resultJSON{}, Index: index}
	// One more than asked for says whether there are more.
	q := contextindex.Query{Text: query, Type: in.Type, Module: strings.TrimSpace(in.Module), Limit: in.Limit + 1}
	q.Vector = s.queryVector(ctx, call.Tenant, corpus, query, &out)
	gctx, cancel := toolkit.Gathering(ctx)
	q.Done = gctx.Done()
	hits, mode := corpus.Search(q)
	stopped := ""
	if gctx.Err() != nil {
		stopped = msgStopped
	}
	cancel()
	out.Mode = mode
	// One notice, the first that applies (the embedding's is set above).
	out.Notice = cmp.Or(out.Notice, stale, stopped, indexNotice(index), s.embeddingNotice(index))
	if len(hits) > in.Limit {
		hits, out.HasMore = hits[:in.Limit], true
	}
	words := queryWords(query)
	for _, h := range hits {
		out.Results = append(out.Results, toJSON(h, words, in.Full))
	}
	out.TotalFound = len(out.Results)
	out.SearchTime = time.Since(start).Milliseconds()
	msg := fmt.Sprintf("Found %d result(s) (%s)", out.TotalFound, out.Mode)
	return toolkit.Result{Data: out, Message: msg}, nil
}

// msgStopped is the notice of a search stopped at its time limit.
const msgStopped = "The search stopped at its time limit: these results rank by the query words scored by then; a shorter query ranks by all of its words."

// msgNoVectors is the notice of a search with an embedder while nothing
// searched has a vector yet (memory entries just written).
const msgNoVectors = "No vectors yet: embeddings are generated in the background. These results are lexical."

// queryVector returns the query's embedding when the corpus has vectors
// to compare it with (nil otherwise); out's notice says why the results
// are lexical when they are for want of one.
func (s *Service) queryVector(ctx context.Context, tenant string, corpus *contextindex.Corpus, query string, out *searchOutput) []float32 {
	switch {
	case s.o.Embedder == nil:
		return nil
	case corpus.Vectors() == 0:
		// The code index's embedding notice, when it has one, says
		// exactly how far its embedding is: one notice, not two.
		if s.embeddingNotice(out.Index) == "" {
			out.Notice = msgNoVectors
		}
		return nil
	}
	vector, err := s.embedQuery(ctx, query)
	if err != nil {
		s.o.Log.Warn("context_search: query embedding failed; serving lexical results", "tenant", tenant, "error", err)
		out.Degraded = true
		out.Notice = "Failed to generate query embedding; these results are lexical only. Use grep_codebase for exact text."
		return nil
	}
	return vector
}

// indexNotice says why the code searched is not the repository as it is
// ("" when it is, or there is no code index).
func indexNotice(index *indexJSON) string {
	switch {
	case index == nil:
		return ""
	case index.State == contextindex.StateBuilding && index.Build != nil && index.Commit != "":
		b := index.Build
		return fmt.Sprintf("A newer snapshot (commit %s) is being indexed, %d of %d batches done: these results come from the index of commit %s.",
			b.Commit, b.BatchesDone, b.Batches, index.Commit)
	case index.State == contextindex.StateBuilding && index.Build != nil:
		b := index.Build
		return fmt.Sprintf("The code index of commit %s is being built, %d of %d batches done: code is not searchable yet; grep_codebase searches every file now.",
			b.Commit, b.BatchesDone, b.Batches)
	case index.State == contextindex.StateBuilding:
		return fmt.Sprintf("The code index is being built (%d of %d files so far): these results come from what is indexed; grep_codebase searches every file now.",
			index.FilesIndexed, index.FilesTotal)
	case index.State == StateLoading:
		return fmt.Sprintf("The code index is being loaded (%d of %d files so far): these results come from what is loaded; grep_codebase searches every file now.",
			index.FilesIndexed, index.FilesTotal)
	}
	return ""
}

// embeddingNotice says how much of the code searched has its vectors,
// when not all of it does: the rest is ranked by its words only ("" when
// there is no embedder, or every chunk has its vector).
func (s *Service) embeddingNotice(index *indexJSON) string {
	if s.o.Embedder == nil || index == nil || index.Chunks == 0 || index.Vectors >= index.Chunks {
		return ""
	}
	why := "the others could not be embedded"
	if index.Pending > 0 {
		why = fmt.Sprintf("%d are still being embedded", index.Pending)
	}
	return fmt.Sprintf("Semantic: %d%% of code chunks embedded (%d of %d; %s): results are ranked by meaning among those, and lexically for the rest.",
		index.Vectors*100/index.Chunks, index.Vectors, index.Chunks, why)
}

// embedQuery embeds the query within queryEmbedTimeout.
func (s *Service) embedQuery(ctx context.Context, query string) ([]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, queryEmbedTimeout)
	defer cancel()
	return contextindex.EmbedQuery(ctx, s.o.Embedder, query)
}

// toJSON renders one hit as the contract's result object.
func toJSON(h contextindex.Hit, words map[string]bool, full bool) resultJSON {
	d := h.Doc
	r := resultJSON{ID: d.ID, Type: d.Type, Content: d.Content, Source: string(d.Source),
		Score: math.Round(h.Score*10000) / 10000}
	if d.Source == contextindex.SourceCode {
		r.Path, r.StartLine, r.EndLine = d.Path, d.Start, d.End
		switch {
		case !full && d.Start > 0:
			r.Content, r.StartLine, r.EndLine = snippet(d.Content, d.Start, words)
		case len(r.Content) > maxCodeContent:
			r.Content = codechunk.Cut(r.Content, maxCodeContent) + "\n…"
		}
	}
	if d.Module != "" {
		r.Module = &d.Module
	}
	if d.Session != "" {
		r.Session = &d.Session
	}
	if !d.Date.IsZero() {
		date := d.Date.UTC().Format(time.RFC3339)
		r.Date = &date
	}
	return r
}
