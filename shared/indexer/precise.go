package indexer

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/precise/fromscip"
	"github.com/toolshed/toolshed/shared/precisebucket"
	"github.com/toolshed/toolshed/shared/precisebucket/convert"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
)

// Precise is the conversion of the precise indexes pushed with snapshots
// (SCIP files beside the zip, which the pointer names: repo.PreciseIndex)
// into the stores the navigation functions read (shared/precisebucket).
//
// A published snapshot's pointer reaches the indexer, which sends one
// message per SCIP file not converted yet to the index queue (or, without
// one, converts them itself, in turn); the index worker converts one per
// invocation. A conversion streams the SCIP file from the bucket through
// convert.Build (against the snapshot's files), writes the store in
// TempDir, uploads it, and records its Status last.
// What is not SCIP, is over MaxBytes, or names no file of the snapshot is
// refused: its Status says why, and the answers about the files it would
// have covered say so. Measured on the index worker's share of a core:
// see docs/deploy.md.
type Precise struct {
	Bucket *objects.Bucket
	// TempDir is where a conversion writes its store and spills what it
	// gathers beyond MemoryBytes: the function's ephemeral storage.
	TempDir string
	// MemoryBytes is what a conversion gathers in memory before it
	// spills (fromscip.Options.MemoryBytes; the process takes about three
	// times that).
	MemoryBytes int64
	// MaxBytes bounds a SCIP file: the repository size limit
	// (TOOLSHED_REPO_MAX_MB), as push bounds it.
	MaxBytes int64
}

// preciseMemoryBytes is Precise.MemoryBytes deployed: five copies of the
// Go tree in one SCIP file (1 GB) convert in 0.8 GB.
const preciseMemoryBytes = 256 << 20

// PreciseJob is a queue message: convert one SCIP file pushed with a
// repository's snapshot (the message's body is {"precise": job}).
type PreciseJob struct {
	// RepoKey is the repository's folder (reposcope.Ref.Key).
	RepoKey string `json:"repo"`
	Commit  string `json:"commit"`
	// SnapshotSeq is the number of the pointer that named it.
	SnapshotSeq int64             `json:"snapshotSeq"`
	Index       repo.PreciseIndex `json:"index"`
}

// preciseMessage is the body of a PreciseJob's message.
type preciseMessage struct {
	Precise *PreciseJob `json:"precise"`
}

// IndexPrecise sends a message for each SCIP file the repository's
// current pointer names that is not converted yet (or, without a queue,
// converts them in turn).
func (ix *Indexer) IndexPrecise(ctx context.Context, repoKey string) error {
	if ix.Precise == nil {
		return nil
	}
	r, err := refOf(repoKey)
	if err != nil {
		return err
	}
	p, ok, err := repo.ReadPointer(ctx, ix.Precise.Bucket, r)
	if err != nil || !ok {
		return err
	}
	var bodies [][]byte
	for _, x := range p.Precise {
		if x.Key == "" {
			continue
		}
		job := PreciseJob{RepoKey: repoKey, Commit: p.Commit, SnapshotSeq: p.Seq, Index: x}
		_, done, err := precisebucket.ReadStatus(ctx, ix.Precise.Bucket, precisebucket.StatusKey(repoKey, p.Commit, x))
		switch {
		case err != nil:
			return err
		case done:
		case ix.Queue == nil:
			if err := ix.RunPrecise(ctx, job); err != nil {
				return err
			}
		default:
			body, _ := json.Marshal(preciseMessage{Precise: &job})
			bodies = append(bodies, body)
		}
	}
	if len(bodies) == 0 {
		return nil
	}
	ix.Log.Info("indexer: precise indexes queued", "repo", repoKey, "commit", p.Commit, "snapshot", p.Seq, "indexes", len(bodies))
	return ix.Queue.Send(ctx, bodies)
}

// RunPrecise converts a job's SCIP file and records its status, unless
// its status is recorded already or a later snapshot that does not name
// it has replaced the one that did. A refused file is recorded failed;
// any other failure is returned, for the message to come back.
func (ix *Indexer) RunPrecise(ctx context.Context, job PreciseJob) error {
	if ix.Precise == nil {
		return errors.New("indexer: no precise conversion is configured")
	}
	r, err := refOf(job.RepoKey)
	if err != nil {
		return err
	}
	b, x := ix.Precise.Bucket, job.Index
	key := precisebucket.StatusKey(job.RepoKey, job.Commit, x)
	if _, done, err := precisebucket.ReadStatus(ctx, b, key); err != nil || done {
		return err
	}
	p, _, err := repo.ReadPointer(ctx, b, r)
	if err != nil {
		return err
	}
	if p.Seq > job.SnapshotSeq && !names(p, job) {
		ix.Log.Info("indexer: precise index of a replaced snapshot dropped", "repo", job.RepoKey, "commit", job.Commit, "scip", x.Key)
		return nil
	}
	st, err := ix.convert(ctx, r, job)
	if refused(err) {
		ix.Log.Warn("indexer: precise index refused", "repo", job.RepoKey, "commit", job.Commit, "scip", x.Key, "error", err)
		st = precisebucket.Status{State: precisebucket.Failed, Reason: err.Error(), Converted: ix.Now()}
	} else if err != nil {
		return fmt.Errorf("convert %s: %w", x.Key, err)
	}
	return precisebucket.WriteStatus(ctx, b, key, st)
}

// names reports whether the pointer p names the job's SCIP file with the
// job's commit.
func names(p repo.Pointer, job PreciseJob) bool {
	for _, x := range p.Precise {
		if p.Commit == job.Commit && x.Key == job.Index.Key {
			return true
		}
	}
	return false
}

// errChanged is a SCIP file that is not the one its pointer names.
var errChanged = errors.New("the SCIP file is not the one the snapshot's pointer names (its content hash differs)")

// refused reports whether err refuses the SCIP file itself (rather than
// a failure to read or write that a retry may get past).
func refused(err error) bool {
	return errors.Is(err, fromscip.ErrNotSCIP) || errors.Is(err, fromscip.ErrTooLarge) ||
		errors.Is(err, fromscip.ErrOutside) || errors.Is(err, errChanged)
}

// convert converts the job's SCIP file into its store, uploaded, and
// returns its status.
func (ix *Indexer) convert(ctx context.Context, r reposcope.Ref, job PreciseJob) (precisebucket.Status, error) {
	started, x := time.Now(), job.Index
	view, err := ix.Snapshots.View(ctx, job.RepoKey, job.Commit)
	if err != nil {
		return precisebucket.Status{}, err
	}
	dir, err := os.MkdirTemp(ix.Precise.TempDir, "precise-*")
	if err != nil {
		return precisebucket.Status{}, err
	}
	defer os.RemoveAll(dir)
	store, err := os.Create(filepath.Join(dir, "store"))
	if err != nil {
		return precisebucket.Status{}, err
	}
	defer store.Close()
	o := convert.Options{Commit: job.Commit, Tenant: r.Tenant, MaxBytes: ix.Precise.MaxBytes, TempDir: dir, MemoryBytes: ix.Precise.MemoryBytes}
	stats, err := ix.build(ctx, view, x, store, o)
	if err != nil {
		return precisebucket.Status{}, err
	}
	if _, err := store.Seek(0, io.SeekStart); err != nil {
		return precisebucket.Status{}, err
	}
	key := precisebucket.StoreKey(job.RepoKey, job.Commit, x)
	etag, err := ix.Precise.Bucket.Upload(ctx, key, store, objects.PutOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return precisebucket.Status{}, err
	}
	took := time.Since(started)
	ix.Log.Info("indexer: precise index converted", "repo", job.RepoKey, "commit", job.Commit, "scip", x.Key, "scip_bytes", stats.InputBytes,
		"store_bytes", stats.Bytes, "documents", stats.Documents, "skipped", stats.Skipped, "spills", stats.Spills, "took_ms", took.Milliseconds())
	return precisebucket.Status{State: precisebucket.Ready, Store: key, Bytes: stats.Bytes, ETag: etag, SCIPBytes: stats.InputBytes,
		Documents: stats.Documents, Skipped: stats.Skipped, Stale: stats.Stale, Seconds: took.Seconds(), Converted: ix.Now()}, nil
}

// build streams x's SCIP file from the bucket through convert.Build into
// store, checking it is the file the pointer names.
func (ix *Indexer) build(ctx context.Context, view repo.View, x repo.PreciseIndex, store io.Writer, o convert.Options) (fromscip.Stats, error) {
	obj, err := ix.Precise.Bucket.Open(ctx, x.Key, "")
	if err != nil {
		return fromscip.Stats{}, err
	}
	defer obj.Body.Close()
	if o.MaxBytes > 0 && obj.Size > o.MaxBytes {
		return fromscip.Stats{}, fmt.Errorf("%w: %d bytes, over the repository's limit of %d", fromscip.ErrTooLarge, obj.Size, o.MaxBytes)
	}
	sum := sha256.New()
	w := bufio.NewWriterSize(store, 1<<20)
	stats, err := convert.Build(ctx, view, x, io.TeeReader(obj.Body, sum), w, o)
	if err == nil {
		err = w.Flush()
	}
	if err == nil && !sameHash(sum, x.SHA256) {
		err = errChanged
	}
	return stats, err
}

// sameHash reports whether h sums to the hex digest want.
func sameHash(h hash.Hash, want string) bool {
	return hex.EncodeToString(h.Sum(nil)) == want
}
