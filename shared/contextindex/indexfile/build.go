package indexfile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/store"
)

// BuildFile is the record of a repository's latest code index build:
// <repo>/build.json.
const BuildFile = "build.json"

// BuildState is how far a build is.
type BuildState string

// The build states.
const (
	// BuildRunning: batches are being built; the repository's pointer still
	// names the index before (if any).
	BuildRunning BuildState = "building"
	// BuildPublished: every batch is built and the index published (its
	// parts' embedding may go on: see PartInfo.Pending).
	BuildPublished BuildState = "published"
)

// Build is the record of a repository's latest code index build, kept by
// the deployed indexer: what it builds, how far it is (context_search's
// answers and operators read it), and the ledger of its batches, each
// done once. A build of a newer snapshot replaces the record, never one
// of an older snapshot; the batches of the one it replaces then stop.
type Build struct {
	Commit string `json:"commit"`
	// SnapshotSeq is the number of the snapshot pointer the build is of
	// (repo.Pointer.Seq; 0 for a pointer without one): a record is never
	// replaced by the build of a lower one (see shared/indexer), and a
	// batch works for the record of its own snapshot only.
	SnapshotSeq int64      `json:"snapshotSeq,omitempty"`
	Model       string     `json:"model,omitempty"`
	State       BuildState `json:"state"`
	Started     time.Time  `json:"started"`
	Updated     time.Time  `json:"updated"`
	Files       int        `json:"files"`   // files of the snapshot to index
	Batches     int        `json:"batches"` // batches they are split into
	// Queued: every batch has been sent to the queue.
	Queued bool `json:"queued"`
	// Done are the parts of the batches done, in name order.
	Done []PartInfo `json:"done"`
}

// Of reports whether the record is the build of the snapshot of commit
// numbered snapshotSeq.
func (b *Build) Of(commit string, snapshotSeq int64) bool {
	return b.Commit == commit && b.SnapshotSeq == snapshotSeq
}

// IsDone reports whether the part of that name is done.
func (b *Build) IsDone(part string) bool {
	_, ok := slices.BinarySearchFunc(b.Done, part, func(p PartInfo, name string) int { return strings.Compare(p.Name, name) })
	return ok
}

// AddDone records a part as done, once; it reports whether it was new.
func (b *Build) AddDone(p PartInfo) bool {
	i, ok := slices.BinarySearchFunc(b.Done, p.Name, func(q PartInfo, name string) int { return strings.Compare(q.Name, name) })
	if ok {
		return false
	}
	b.Done = slices.Insert(b.Done, i, p)
	return true
}

// Part returns the record of the part of that name, if it is done.
func (b *Build) Part(name string) (PartInfo, bool) {
	i, ok := slices.BinarySearchFunc(b.Done, name, func(p PartInfo, name string) int { return strings.Compare(p.Name, name) })
	if !ok {
		return PartInfo{}, false
	}
	return b.Done[i], true
}

// SetPart replaces the record of a part done (its vectors arrived); it
// reports whether the part was done.
func (b *Build) SetPart(p PartInfo) bool {
	i, ok := slices.BinarySearchFunc(b.Done, p.Name, func(q PartInfo, name string) int { return strings.Compare(q.Name, name) })
	if ok {
		b.Done[i] = p
	}
	return ok
}

// Complete reports whether every batch is done.
func (b *Build) Complete() bool { return b.Batches > 0 && len(b.Done) == b.Batches }

// buildKey is where the repository's build record lives.
func buildKey(repoKey string) (string, error) {
	if err := checkKey(repoKey); err != nil {
		return "", err
	}
	return repoKey + "/" + BuildFile, nil
}

// Build reads the repository's build record and its ETag, or returns an error
// wrapping fs.ErrNotExist when there is none. With the ETag of the
// record the caller holds, ErrNotModified says it is unchanged.
func (s *Store) Build(ctx context.Context, repoKey, etag string) (Build, string, error) {
	key, err := buildKey(repoKey)
	if err != nil {
		return Build{}, "", err
	}
	raw, tag, err := s.blobs.Get(ctx, key, etag)
	if err != nil {
		return Build{}, tag, err
	}
	var b Build
	if err := json.Unmarshal(raw, &b); err != nil {
		return Build{}, "", fmt.Errorf("%s: %w", key, err)
	}
	return b, tag, nil
}

// SaveBuild writes the repository's build record if the stored one still has
// the ETag etag ("" when there was none); a lost race is ErrPrecondition.
func (s *Store) SaveBuild(ctx context.Context, repoKey string, b Build, etag string) (string, error) {
	key, err := buildKey(repoKey)
	if err != nil {
		return "", err
	}
	match := etag
	if match == "" {
		match = IfAbsent
	}
	raw, _ := json.Marshal(b)
	return s.blobs.Put(ctx, key, raw, match)
}

// UpdateBuild applies change to the repository's build record (the zero Build
// when there is none) and saves it with a conditional write, reading it
// again when another writer got there first. change returns false to
// leave the record as it is. It returns the record as saved or left.
func (s *Store) UpdateBuild(ctx context.Context, repoKey string, change func(b *Build) bool) (Build, error) {
	var err error
	for range maxSaveAttempts * 4 {
		var b Build
		var etag string
		b, etag, err = s.Build(ctx, repoKey, "")
		switch {
		case errors.Is(err, store.ErrStorage):
			// Many batches update the record at once; one that finished its
			// part must not be done again for a read that failed once.
			continue
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return Build{}, err
		}
		if !change(&b) {
			return b, nil
		}
		_, err = s.SaveBuild(ctx, repoKey, b, etag)
		if !errors.Is(err, ErrPrecondition) && !errors.Is(err, store.ErrStorage) {
			return b, err
		}
	}
	return Build{}, fmt.Errorf("save the build record of %s: %d failed or conflicting writes in a row: %w", repoKey, maxSaveAttempts*4, err)
}
