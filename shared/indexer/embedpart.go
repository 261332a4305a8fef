package indexer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
)

// RunEmbed embeds the chunks of a built part that wait for a vector,
// resuming from the part's checkpoint, until none is left or the round's
// time is up (then it saves the checkpoint and queues itself again). The
// provider's throttling slows it down and never fails it: the requests
// are paced within the quota, and a throttled one is tried again. Done,
// it saves the part's vectors and records its counts, and publishes the
// index again if it is published, for readers to take the vectors.
func (ix *Indexer) RunEmbed(ctx context.Context, b Batch) error {
	name := indexfile.PartName(b.N)
	rec, ok, err := ix.current(ctx, b)
	if err != nil || !ok || ix.Embedder == nil {
		return err
	}
	info, ok := rec.Part(name)
	if !ok || info.Pending == 0 {
		return nil // not built yet (its batch queues this again), or embedded
	}
	r, err := ix.embedPart(ctx, b, info)
	if err != nil {
		return fmt.Errorf("embed part %s of %s: %w", name, b.Commit, err)
	}
	if !r.finished {
		return ix.queue(ctx, []Batch{continuation(b, r)})
	}
	rec, err = ix.Store.UpdateBuild(ctx, b.RepoKey, func(rec *indexfile.Build) bool {
		rec.Updated = ix.Now()
		return rec.Of(b.Commit, b.SnapshotSeq) && rec.SetPart(r.part)
	})
	if err != nil {
		return fmt.Errorf("record the vectors of part %s of %s: %w", name, b.Commit, err)
	}
	if rec.Of(b.Commit, b.SnapshotSeq) && rec.State == indexfile.BuildPublished {
		if _, err := ix.Store.Publish(ctx, b.RepoKey, manifestOf(rec)); err != nil {
			return fmt.Errorf("publish %s with the vectors of part %s: %w", b.Commit, name, err)
		}
	}
	return nil
}

// embedPart is one round of embedding a part: it saves the part's vectors
// when they are done (or the provider failed every request for
// maxStalledRounds rounds: the chunks left are counted failed, found by
// their words), else its checkpoint.
func (ix *Indexer) embedPart(ctx context.Context, b Batch, info indexfile.PartInfo) (round, error) {
	started := time.Now()
	code, err := ix.Store.LoadPart(ctx, b.RepoKey, b.Commit, info.Name, true)
	if err != nil {
		return round{}, err
	}
	resumed := code.ReuseVectors(ix.model())
	switch cp, err := ix.Store.Checkpoint(ctx, b.RepoKey, b.Commit, info.Name); {
	case err == nil:
		resumed = code.ReuseVectors(ix.model(), cp)
	case !errors.Is(err, fs.ErrNotExist):
		ix.Log.Warn("indexer: checkpoint unreadable; embedding the part's texts again", "repo", b.RepoKey, "part", info.Name, "error", err)
	}
	texts, _ := code.Missing()
	ix.Log.Info("indexer: embed round started", "repo", b.RepoKey, "commit", b.Commit, "part", info.Name,
		"round", b.Rounds+1, "resumed", resumed, "to_embed", len(texts))
	tokens := ix.tokens()
	until, every := roundTime(ctx, time.Now())
	r := round{}
	r.stats = embedTexts(ctx, ix.Embedder, code.Vectors, texts, until, every, func(v *contextindex.Vectors) {
		ix.checkpoint(ctx, b, v)
	})
	r.stats.Tokens = ix.tokens() - tokens
	if err := ctx.Err(); err != nil {
		return round{}, err
	}
	// Throttling only slows a part down; a provider that failed every
	// request for many rounds in a row is given up on.
	stalled := b.Stalled+1 >= maxStalledRounds && r.stats.Embedded == 0 && r.stats.Throttled == 0
	r.finished = r.stats.Left == 0 || stalled
	_, missing := code.Missing()
	r.part = info
	r.part.Vectors, r.part.Embedded = info.Chunks-missing, code.Vectors.Len()-info.Reused
	if r.finished {
		r.part.Pending, r.part.Failed = 0, missing
		err = ix.Store.SavePartVectors(ctx, b.RepoKey, b.Commit, info.Name, code.Vectors)
	} else {
		err = ix.Store.SaveCheckpoint(ctx, b.RepoKey, b.Commit, info.Name, code.Vectors)
	}
	if err != nil {
		return round{}, err
	}
	ix.Log.Info("indexer: embed round", "repo", b.RepoKey, "commit", b.Commit, "part", info.Name, "round", b.Rounds+1,
		"finished", r.finished, "chunks", info.Chunks, "vectors", r.part.Vectors, "embedded", r.stats.Embedded,
		"requests", r.stats.Requests, "throttled", r.stats.Throttled, "tokens", r.stats.Tokens, "failed", r.stats.Failed,
		"left", r.stats.Left, "duration_ms", time.Since(started).Milliseconds())
	ix.roundMetrics(r, time.Since(started))
	return r, nil
}

// tokens is how many input tokens the embedder's provider has counted,
// when it says (Bedrock does).
func (ix *Indexer) tokens() int64 {
	if t, ok := ix.Embedder.(interface{ Tokens() int64 }); ok {
		return t.Tokens()
	}
	return 0
}
