package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
)

// Batch is one message on the index queue: a run of a snapshot's files,
// in path order, to build into one part of the commit's index.
type Batch struct {
	// RepoKey is the repository's folder (reposcope.Ref.Key: <tenant>
	// for a tenant's default repository, <tenant>/<name> for its named
	// ones), its index's key.
	RepoKey string `json:"repo"`
	Commit  string `json:"commit"`
	// SnapshotSeq is the number of the snapshot its build is of
	// (Snapshot.Seq): a batch works for that build only.
	SnapshotSeq int64    `json:"snapshotSeq,omitempty"`
	N           int      `json:"n"`     // its part is indexfile.PartName(N)
	Paths       []string `json:"paths"` // its files, in path order
	// Reuse are parts of earlier indexes holding files of the batch's
	// range, whose vectors its chunks may reuse.
	Reuse []PartRef `json:"reuse,omitempty"`
	// Embed: the message embeds the chunks of the batch's part, built
	// already, that wait for a vector (Paths are then left out).
	Embed bool `json:"embed,omitempty"`
	// Rounds is how many invocations have worked on it before;
	// Stalled, how many of those in a row embedded nothing.
	Rounds  int `json:"rounds,omitempty"`
	Stalled int `json:"stalled,omitempty"`
}

// UnmarshalJSON decodes a batch message, also one written before the
// repository's key was named "repo": a deploy finds such messages in the
// index queue (continuations, retries) and in its dead-letter queue, which
// keeps them 14 days for a redrive. The old name can go once no queue
// holds messages written before this version.
func (b *Batch) UnmarshalJSON(data []byte) error {
	type fields Batch // Batch's fields without this method
	var m struct {
		fields
		Tenant string `json:"tenant"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*b = Batch(m.fields)
	if b.RepoKey == "" {
		b.RepoKey = m.Tenant
	}
	return nil
}

// PartRef names a part of a commit's index ("" for an index stored
// whole).
type PartRef struct {
	Commit string `json:"commit"`
	Part   string `json:"part,omitempty"`
}

// Batch limits: a batch is at most BatchFiles files and maxBatchBytes of
// them (the part it builds and its vectors fit an invocation's memory and
// time several times over), and its message at most maxMessageBytes of
// paths (SQS takes 256 KiB).
const (
	maxBatchBytes   = 8 << 20
	maxMessageBytes = 200 << 10
)

// stalledAfter is how long a build may go without a batch done before a
// new event of its snapshot sends its unfinished batches again (their
// messages may have ended in the dead-letter queue).
const stalledAfter = 30 * time.Minute

// IndexSnapshot plans the build of the repository's current snapshot,
// unless that snapshot, or a later one, is indexed or being built: it
// splits the searchable files into batches, records the build and queues
// the batches (or, without a queue, builds them one after another).
// Snapshots are ordered by their pointer's number (Snapshot.Seq), so a
// plan that took long, or an event delivered late, never replaces the
// build or the index of a later snapshot.
func (ix *Indexer) IndexSnapshot(ctx context.Context, repoKey string) error {
	if ix.Snapshots == nil {
		return errors.New("no snapshot reader is configured")
	}
	snap, err := ix.Snapshots.Current(ctx, repoKey)
	if err != nil {
		return fmt.Errorf("open snapshot: %w", err)
	}
	// The pointer says what is indexed: a repeated event (S3 notifies at
	// least once) stops here, and so does the plan of an earlier snapshot.
	p, _, err := ix.Store.Pointer(ctx, repoKey, "")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read the index pointer: %w", err)
	}
	indexed := err == nil && p.Commit == snap.Commit && p.Model == ix.model()
	switch {
	case err == nil && p.SnapshotSeq > snap.Seq:
		ix.Log.Info("indexer: a later snapshot is indexed; this one is left", "repo", repoKey, "commit", snap.Commit,
			"snapshot", snap.Seq, "indexed", p.Commit, "indexed_snapshot", p.SnapshotSeq)
		return nil
	case indexed && p.SnapshotSeq < snap.Seq && p.Parts > 0:
		return ix.adopt(ctx, repoKey, snap)
	case indexed && p.SnapshotSeq == snap.Seq:
		ix.Log.Info("indexer: snapshot already indexed", "repo", repoKey, "commit", snap.Commit)
		return nil
	}
	// A snapshot not indexed, or one whose commit's index an earlier
	// version stored whole (it has no manifest to adopt): built in parts,
	// with that index's vectors reused.
	return ix.plan(ctx, repoKey, snap, p)
}

// plan plans the build of a snapshot the index pointer p does not name,
// unless it is under way.
func (ix *Indexer) plan(ctx context.Context, repoKey string, snap Snapshot, p indexfile.Pointer) error {
	prev, _, err := ix.Store.Build(ctx, repoKey, "")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read the build record: %w", err)
	}
	now := ix.Now()
	batches := ix.split(repoKey, snap)
	building := prev.Of(snap.Commit, snap.Seq) && prev.Model == ix.model() && prev.State == indexfile.BuildRunning
	if building && prev.Queued && now.Sub(prev.Updated) < stalledAfter {
		ix.Log.Info("indexer: snapshot being indexed", "repo", repoKey, "commit", snap.Commit, "done", len(prev.Done), "batches", prev.Batches)
		return nil
	}
	replaced := prev
	if building {
		// Its batches were not all queued, or nothing has been done for a
		// while: send again those not done (their checkpoints are kept).
		replaced = indexfile.Build{}
		batches = slices.DeleteFunc(batches, func(b Batch) bool { return prev.IsDone(indexfile.PartName(b.N)) })
	}
	ix.reuse(ctx, repoKey, p, replaced, batches)
	if !building {
		if recorded, err := ix.record(ctx, repoKey, snap, len(batches), now); err != nil || !recorded {
			return err
		}
	}
	if err := ix.queue(ctx, batches); err != nil {
		return err
	}
	_, err = ix.Store.UpdateBuild(ctx, repoKey, func(b *indexfile.Build) bool {
		if !b.Of(snap.Commit, snap.Seq) || b.Queued {
			return false
		}
		b.Queued, b.Updated = true, ix.Now()
		return true
	})
	return err
}

// record makes the build of the snapshot, of that many batches, the
// repository's build record, with a conditional write that replaces the
// build of an earlier snapshot. When the record holds the build of a
// later one (planned while this plan listed its files), it records
// nothing and reports false: a build record only moves forward.
func (ix *Indexer) record(ctx context.Context, repoKey string, snap Snapshot, batches int, now time.Time) (bool, error) {
	rec, err := ix.Store.UpdateBuild(ctx, repoKey, func(b *indexfile.Build) bool {
		if b.SnapshotSeq > snap.Seq || b.Of(snap.Commit, snap.Seq) && b.Model == ix.model() {
			return false // a later snapshot's build, or this one's, planned meanwhile
		}
		*b = indexfile.Build{Commit: snap.Commit, SnapshotSeq: snap.Seq, Model: ix.model(), State: indexfile.BuildRunning,
			Started: now, Updated: now, Files: len(snap.Files), Batches: batches}
		return true
	})
	if err != nil {
		return false, fmt.Errorf("record the build: %w", err)
	}
	if !rec.Of(snap.Commit, snap.Seq) || rec.Model != ix.model() {
		ix.leave(repoKey, snap, rec)
		return false, nil
	}
	ix.Log.Info("indexer: build planned", "repo", repoKey, "commit", snap.Commit, "snapshot", snap.Seq, "files", len(snap.Files), "batches", batches)
	return true, nil
}

// adopt makes the published index of the snapshot's commit, built in
// parts from an earlier snapshot of that commit, the index of this later
// one (the repository's pointer came back to the commit, by a rollback;
// or it was numbered since). The build record moves to it, which stops
// the build of any earlier snapshot, and so does the index pointer, so
// that such a build, finished meanwhile, cannot publish over it.
func (ix *Indexer) adopt(ctx context.Context, repoKey string, snap Snapshot) error {
	m, err := ix.Store.Manifest(ctx, repoKey, snap.Commit)
	if err != nil {
		return fmt.Errorf("read the published index's manifest: %w", err)
	}
	m.SnapshotSeq = snap.Seq
	rec, err := ix.Store.UpdateBuild(ctx, repoKey, func(b *indexfile.Build) bool {
		if b.SnapshotSeq >= snap.Seq {
			return false // this snapshot's record, or a later one's
		}
		*b = indexfile.Build{Commit: m.Commit, SnapshotSeq: m.SnapshotSeq, Model: m.Model, State: indexfile.BuildPublished,
			Started: m.BuiltAt, Updated: ix.Now(), Files: indexfile.Totals(m.Parts).Files, Batches: len(m.Parts), Queued: true, Done: m.Parts}
		return true
	})
	if err != nil {
		return fmt.Errorf("record the build: %w", err)
	}
	if !rec.Of(snap.Commit, snap.Seq) {
		ix.leave(repoKey, snap, rec)
		return nil
	}
	moved, err := ix.Store.Publish(ctx, repoKey, m)
	if err != nil {
		return fmt.Errorf("publish %s: %w", snap.Commit, err)
	}
	ix.Log.Info("indexer: published index taken for a later snapshot of its commit", "repo", repoKey, "commit", snap.Commit,
		"snapshot", snap.Seq, "pointer_moved", moved)
	return nil
}

// leave logs that the snapshot's plan stops there: the build record rec
// is a later snapshot's.
func (ix *Indexer) leave(repoKey string, snap Snapshot, rec indexfile.Build) {
	ix.Log.Info("indexer: a later snapshot's build is recorded; this one is left", "repo", repoKey, "commit", snap.Commit,
		"snapshot", snap.Seq, "building", rec.Commit, "building_snapshot", rec.SnapshotSeq)
}

// model names the embedder's vectors ("" without one).
func (ix *Indexer) model() string {
	if ix.Embedder == nil {
		return ""
	}
	return ix.Embedder.Model()
}

// split cuts the snapshot's files, in path order, into batches of at most
// BatchFiles files, maxBatchBytes of content and maxMessageBytes of paths.
func (ix *Indexer) split(repoKey string, snap Snapshot) []Batch {
	files := slices.Clone(snap.Files)
	slices.SortFunc(files, func(a, b contextindex.File) int { return strings.Compare(a.Path, b.Path) })
	most := ix.BatchFiles
	if most <= 0 {
		most = defaultBatchFiles
	}
	var out []Batch
	var cur Batch
	bytes, pathBytes := 0, 0
	for _, f := range files {
		if len(cur.Paths) > 0 && (len(cur.Paths) >= most || bytes+len(f.Content) > maxBatchBytes || pathBytes+len(f.Path) > maxMessageBytes) {
			out = append(out, cur)
			cur, bytes, pathBytes = Batch{}, 0, 0
		}
		cur.Paths = append(cur.Paths, f.Path)
		bytes += len(f.Content)
		pathBytes += len(f.Path) + 3 // quotes and comma
	}
	if len(cur.Paths) > 0 || len(out) == 0 {
		out = append(out, cur) // a snapshot of no files is one empty batch
	}
	for i := range out {
		out[i].RepoKey, out[i].Commit, out[i].SnapshotSeq, out[i].N = repoKey, snap.Commit, snap.Seq, i
	}
	return out
}

// reuse tells each batch which parts of earlier indexes hold files of its
// range: those of the published index (p; one whole index is one part
// holding everything) and those done by the build being replaced.
func (ix *Indexer) reuse(ctx context.Context, repoKey string, p indexfile.Pointer, replaced indexfile.Build, batches []Batch) {
	if ix.Embedder == nil {
		return
	}
	type source struct {
		commit string
		parts  []indexfile.PartInfo
	}
	var sources []source
	switch {
	case p.Commit == "" || p.Model != ix.model():
	case p.Parts == 0:
		sources = append(sources, source{p.Commit, []indexfile.PartInfo{{Last: "\U0010FFFF"}}})
	default:
		m, err := ix.Store.Manifest(ctx, repoKey, p.Commit)
		if err != nil {
			ix.Log.Warn("indexer: the published index's manifest is unreadable; its vectors are not reused", "repo", repoKey, "error", err)
			break
		}
		sources = append(sources, source{p.Commit, m.Parts})
	}
	if replaced.State == indexfile.BuildRunning && replaced.Commit != p.Commit && replaced.Model == ix.model() {
		sources = append(sources, source{replaced.Commit, replaced.Done})
	}
	for i, b := range batches {
		if len(b.Paths) == 0 {
			continue
		}
		first, last := b.Paths[0], b.Paths[len(b.Paths)-1]
		for _, s := range sources {
			for _, part := range s.parts {
				if part.Overlaps(first, last) {
					batches[i].Reuse = append(batches[i].Reuse, PartRef{Commit: s.commit, Part: part.Name})
				}
			}
		}
	}
}

// queueOf is the queue of embed messages (embed) or of the others: the
// embed queue, or the index queue when there is none (nil without
// either).
func (ix *Indexer) queueOf(embed bool) Queue {
	if embed && ix.EmbedQueue != nil {
		return ix.EmbedQueue
	}
	return ix.Queue
}

// queue sends batches, all embed messages or none, to their queue
// (queueOf) or, without one, runs them here.
func (ix *Indexer) queue(ctx context.Context, batches []Batch) error {
	q := ix.queueOf(len(batches) > 0 && batches[0].Embed)
	if q == nil {
		for _, b := range batches {
			if err := ix.RunBatch(ctx, b); err != nil {
				return err
			}
		}
		return nil
	}
	bodies := make([][]byte, len(batches))
	for i, b := range batches {
		bodies[i], _ = json.Marshal(b)
	}
	if err := q.Send(ctx, bodies); err != nil {
		return fmt.Errorf("queue %d batches: %w", len(batches), err)
	}
	return nil
}
