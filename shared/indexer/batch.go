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

// maxStalledRounds is how many rounds in a row a batch may embed nothing
// (the provider failing or throttling every request) before it is built
// with the chunks left without a vector, counted failed: the build
// finishes, and those chunks are found lexically until a later build
// embeds them.
const maxStalledRounds = 10

// Round timing: a round stops embedding when a third of the time the
// invocation had left is left (to save its checkpoint or part and record
// it; and a round stays under the duration alarm, 80% of the timeout),
// and checkpoints every eighth of that time, at most every
// maxCheckpointEvery; without a deadline a round lasts
// roundWithoutDeadline.
const (
	maxCheckpointEvery   = 30 * time.Second
	roundWithoutDeadline = 5 * time.Minute
)

// round is what one invocation did of a batch.
type round struct {
	part     indexfile.PartInfo
	finished bool // the part is saved; else its checkpoint is
	stats    embedStats
}

// RunBatch builds a batch's part of its commit's index and records it in
// the build record; the batch that completes the build publishes the
// index. A part is built by its words alone (with the vectors earlier
// builds made of the same texts): the index is searchable as soon as
// every part is built, whatever embedding is left, which an embed message
// per part does after (RunEmbed). A batch of a build that was replaced by
// a newer one is dropped.
func (ix *Indexer) RunBatch(ctx context.Context, b Batch) error {
	if b.Embed {
		return ix.RunEmbed(ctx, b)
	}
	name := indexfile.PartName(b.N)
	rec, ok, err := ix.current(ctx, b)
	if err != nil || !ok {
		return err
	}
	if !rec.IsDone(name) {
		part, err := ix.buildPart(ctx, b, rec.Started)
		if err != nil {
			return fmt.Errorf("build part %s of %s: %w", name, b.Commit, err)
		}
		rec, err = ix.Store.UpdateBuild(ctx, b.RepoKey, func(rec *indexfile.Build) bool {
			if !rec.Of(b.Commit, b.SnapshotSeq) {
				return false
			}
			rec.Updated = ix.Now()
			return rec.AddDone(part)
		})
		if err != nil {
			return fmt.Errorf("record part %s of %s: %w", name, b.Commit, err)
		}
		if !rec.Of(b.Commit, b.SnapshotSeq) {
			ix.Log.Info("indexer: part of a replaced build left unrecorded", "repo", b.RepoKey, "commit", b.Commit, "part", name)
			return nil
		}
	}
	if rec.Complete() && rec.State == indexfile.BuildRunning {
		if err := ix.publish(ctx, b.RepoKey, rec); err != nil {
			return err
		}
	}
	// Queued again when the batch is delivered again (the message may
	// have been lost): embedding a part twice embeds nothing twice.
	if p, ok := rec.Part(name); ok && p.Pending > 0 {
		embed := Batch{RepoKey: b.RepoKey, Commit: b.Commit, SnapshotSeq: b.SnapshotSeq, N: b.N, Embed: true}
		return ix.queue(ctx, []Batch{embed})
	}
	return nil
}

// current reads the build record, reporting false when it is no longer
// the batch's build (the batch is then dropped).
func (ix *Indexer) current(ctx context.Context, b Batch) (indexfile.Build, bool, error) {
	rec, _, err := ix.Store.Build(ctx, b.RepoKey, "")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rec, false, fmt.Errorf("read the build record: %w", err)
	}
	if !rec.Of(b.Commit, b.SnapshotSeq) || rec.Model != ix.model() {
		ix.Log.Info("indexer: batch of a replaced build dropped", "repo", b.RepoKey, "commit", b.Commit,
			"part", indexfile.PartName(b.N), "embed", b.Embed, "building", rec.Commit)
		return rec, false, nil
	}
	return rec, true, nil
}

// continuation is the batch's message for the next round after r.
func continuation(b Batch, r round) Batch {
	next := b
	next.Rounds++
	next.Stalled = 0
	if r.stats.Embedded == 0 {
		next.Stalled = b.Stalled + 1
	}
	return next
}

// buildPart builds and saves a batch's part: its files cut and tokenized,
// its chunks given the vectors their texts have in earlier indexes; the
// others are counted pending.
func (ix *Indexer) buildPart(ctx context.Context, b Batch, builtAt time.Time) (indexfile.PartInfo, error) {
	started := time.Now()
	name := indexfile.PartName(b.N)
	files, err := ix.Snapshots.Files(ctx, b.RepoKey, b.Commit, b.Paths)
	if err != nil {
		return indexfile.PartInfo{}, err
	}
	code, st, err := contextindex.BuildCode(ctx, nil, contextindex.Snapshot{Commit: b.Commit, Files: files}, nil, builtAt)
	if err != nil {
		return indexfile.PartInfo{}, err
	}
	part := indexfile.PartInfo{Name: name, Files: len(files), Chunks: st.Chunks}
	if len(b.Paths) > 0 {
		part.First, part.Last = b.Paths[0], b.Paths[len(b.Paths)-1]
	}
	if ix.Embedder != nil {
		part.Reused = code.ReuseVectors(ix.model(), ix.reusable(ctx, b)...)
		_, part.Pending = code.Missing()
		part.Vectors = st.Chunks - part.Pending
	}
	if err := ix.Store.SavePart(ctx, b.RepoKey, b.Commit, name, code); err != nil {
		return indexfile.PartInfo{}, err
	}
	ix.Log.Info("indexer: part built", "repo", b.RepoKey, "commit", b.Commit, "part", name, "files", part.Files,
		"chunks", part.Chunks, "reused", part.Reused, "pending", part.Pending, "duration_ms", time.Since(started).Milliseconds())
	return part, nil
}

// roundTime returns when a round started at now stops embedding, and how
// often it checkpoints (see the constants above).
func roundTime(ctx context.Context, now time.Time) (until time.Time, every time.Duration) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = now.Add(roundWithoutDeadline)
	}
	left := deadline.Sub(now)
	return deadline.Add(-left / 3), max(min(left/8, maxCheckpointEvery), 10*time.Millisecond)
}

// reusable reads the vectors of the parts the batch may reuse; a part
// that cannot be read is skipped (its texts are embedded again).
func (ix *Indexer) reusable(ctx context.Context, b Batch) []*contextindex.Vectors {
	var out []*contextindex.Vectors
	for _, ref := range b.Reuse {
		v, err := ix.Store.PartVectors(ctx, b.RepoKey, ref.Commit, ref.Part)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				ix.Log.Warn("indexer: earlier vectors unreadable; embedding their texts again", "repo", b.RepoKey, "commit", ref.Commit, "part", ref.Part, "error", err)
			}
			continue
		}
		out = append(out, v)
	}
	return out
}

// checkpoint saves the vectors of a part being embedded; a failure only
// costs a retry the texts embedded since the last one.
func (ix *Indexer) checkpoint(ctx context.Context, b Batch, v *contextindex.Vectors) {
	name := indexfile.PartName(b.N)
	if err := ix.Store.SaveCheckpoint(ctx, b.RepoKey, b.Commit, name, v); err != nil {
		ix.Log.Warn("indexer: checkpoint failed", "repo", b.RepoKey, "part", name, "error", err)
		return
	}
	ix.Log.Info("indexer: checkpoint saved", "repo", b.RepoKey, "commit", b.Commit, "part", name, "vectors", v.Len())
}

// publish publishes a complete build's index and marks the build
// published. The index pointer moves only if it names the index of an
// earlier snapshot (see indexfile.Store.Publish): this build may have
// been replaced by a later snapshot's since its last part was recorded,
// and that one may be published already.
func (ix *Indexer) publish(ctx context.Context, repoKey string, rec indexfile.Build) error {
	moved, err := ix.Store.Publish(ctx, repoKey, manifestOf(rec))
	if err != nil {
		return fmt.Errorf("publish %s: %w", rec.Commit, err)
	}
	_, err = ix.Store.UpdateBuild(ctx, repoKey, func(b *indexfile.Build) bool {
		if !b.Of(rec.Commit, rec.SnapshotSeq) || b.State == indexfile.BuildPublished {
			return false
		}
		b.State, b.Updated = indexfile.BuildPublished, ix.Now()
		return true
	})
	if err != nil {
		return fmt.Errorf("record the publication of %s: %w", rec.Commit, err)
	}
	t := indexfile.Totals(rec.Done)
	took := ix.Now().Sub(rec.Started)
	ix.Log.Info("indexer: code index published", "repo", repoKey, "commit", rec.Commit, "pointer_moved", moved,
		"files", t.Files, "parts", len(rec.Done), "chunks", t.Chunks, "vectors", t.Vectors, "reused", t.Reused,
		"embedded", t.Embedded, "pending", t.Pending, "failed", t.Failed, "duration_ms", took.Milliseconds())
	ix.publishMetrics(t, took)
	return nil
}

// manifestOf is the manifest of a build's parts.
func manifestOf(rec indexfile.Build) indexfile.Manifest {
	return indexfile.Manifest{Commit: rec.Commit, SnapshotSeq: rec.SnapshotSeq, BuiltAt: rec.Started, Model: rec.Model, Parts: rec.Done}
}
