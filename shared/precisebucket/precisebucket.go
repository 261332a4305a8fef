// Package precisebucket keeps the precise code intelligence of a
// deployment in its bucket: the stores (package precise) the deployed
// indexer converts from the SCIP files pushed with snapshots (see
// repo.PreciseIndex), what it records of each conversion, and Reader,
// which opens them by range for the navigation functions.
//
// # Layout
//
// Under Prefix, in the folder of each repository (reposcope.Ref.Key),
// each SCIP file pushed with a snapshot of a commit has its store and its
// status, named by the commit and the SCIP file's content hash:
//
//	precise/<repo>/<commit>.<sha>.idx    the store
//	precise/<repo>/<commit>.<sha>.json   its Status, written last
//
// A status is final: ready (the store is complete) or failed (the SCIP
// file was refused, and why). No status yet means the conversion is under
// way. Because names come from content, conversions never overwrite one
// another: a late conversion of an older snapshot writes its own objects,
// which no reader of a newer snapshot looks at, since a reader reads the
// stores the pointer of the snapshot it serves names.
//
// Only the indexer writes here; the navigation functions read
// (shared/indexer and shared/tools/navigate grant it so).
package precisebucket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/repo"
)

// Prefix is the folder of the stores in the bucket.
const Prefix = "precise/"

// base is the key of x's objects of the repository's commit, less their
// extension.
func base(repoKey, commit string, x repo.PreciseIndex) string {
	return Prefix + repoKey + "/" + commit + "." + x.SHA256[:16]
}

// StoreKey is the key of the store of x, a SCIP file pushed with the
// snapshot of commit of the repository whose folder is repoKey.
func StoreKey(repoKey, commit string, x repo.PreciseIndex) string {
	return base(repoKey, commit, x) + ".idx"
}

// StatusKey is the key of the status of x's conversion.
func StatusKey(repoKey, commit string, x repo.PreciseIndex) string {
	return base(repoKey, commit, x) + ".json"
}

// The final states of a conversion.
const (
	Ready  = "ready"
	Failed = "failed"
)

// Status is what the indexer records of a conversion, once it is over.
type Status struct {
	State string `json:"state"` // Ready or Failed
	// Reason says why the SCIP file was refused (Failed): not SCIP, too
	// large, or naming no file of the snapshot. It quotes no content of
	// the repository.
	Reason string `json:"reason,omitempty"`
	// Store, Bytes and ETag are the store's object (Ready), so that a
	// reader opens it without asking S3 first.
	Store     string `json:"store,omitempty"`
	Bytes     int64  `json:"bytes,omitempty"`
	ETag      string `json:"etag,omitempty"`
	SCIPBytes int64  `json:"scipBytes,omitempty"`
	Documents int    `json:"documents,omitempty"`
	// Skipped counts the documents left out, not being files of the
	// snapshot (see fromscip.Options.SkipOutside).
	Skipped int `json:"skipped,omitempty"`
	// Stale counts the documents whose text was not the snapshot's.
	Stale     int       `json:"stale,omitempty"`
	Seconds   float64   `json:"seconds"`
	Converted time.Time `json:"converted"`
}

// maxStatusBytes bounds what is read of a status.
const maxStatusBytes = 64 << 10

// ReadStatus returns the status at key; false when there is none yet.
func ReadStatus(ctx context.Context, b *objects.Bucket, key string) (Status, bool, error) {
	raw, _, err := b.Read(ctx, key, "", maxStatusBytes)
	if errors.Is(err, objects.ErrNotFound) {
		return Status{}, false, nil
	}
	if err != nil {
		return Status{}, false, fmt.Errorf("read %s: %w", key, err)
	}
	var s Status
	if err := json.Unmarshal(raw, &s); err != nil {
		return Status{}, false, fmt.Errorf("decode %s: %w", key, err)
	}
	return s, true, nil
}

// WriteStatus writes the status at key.
func WriteStatus(ctx context.Context, b *objects.Bucket, key string, s Status) error {
	raw, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if _, err := b.Put(ctx, key, raw, objects.PutOptions{ContentType: "application/json"}); err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	return nil
}
