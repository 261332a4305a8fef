// Package convert converts a SCIP file pushed with a snapshot into its
// precise store, as the deployed indexer does and as scripts/snapshot
// push checks a file made elsewhere before it uploads it: one rule for
// both. It lives apart from package precisebucket so that the navigation
// functions, which only read stores, do not link the SCIP bindings.
package convert

import (
	"context"
	"fmt"
	"io"

	"github.com/toolshed/toolshed/shared/precise/fromscip"
	"github.com/toolshed/toolshed/shared/precisebucket"
	"github.com/toolshed/toolshed/shared/repo"
)

// Options say what the store is of and how the conversion may work.
type Options struct {
	Commit string
	Tenant string // the repository's tenant (precise.WriterOptions.Tenant)
	// MaxBytes bounds the SCIP file (the repository size limit).
	MaxBytes int64
	// Docs are the hashes of the snapshot's searchable files x covers
	// (Hashes), when the caller has them; nil: Build reads them.
	Docs map[string][32]byte
	// TempDir and MemoryBytes are fromscip.Options'.
	TempDir     string
	MemoryBytes int64
}

// Build converts the SCIP file r gives, pushed as x with the snapshot
// whose view is snap, into its store on w. The store names documents by
// their path from the repository's root (x.Root) and keeps the hashes of
// the snapshot's searchable files x covers; a document that is not one of
// them is left out (the files push or the policy left out of the
// snapshot, those cgo generates, those of other projects), and a file
// none of whose documents is one is refused (fromscip.ErrOutside), as is
// one that is not SCIP (ErrNotSCIP) or too large (ErrTooLarge).
func Build(ctx context.Context, snap repo.View, x repo.PreciseIndex, r io.Reader, w io.Writer, o Options) (fromscip.Stats, error) {
	docs := o.Docs
	if docs == nil {
		var err error
		if docs, err = Hashes(ctx, snap, x); err != nil {
			return fromscip.Stats{}, fmt.Errorf("read the snapshot's files: %w", err)
		}
	}
	return fromscip.Build(ctx, r, w, fromscip.Options{Commit: o.Commit, Tenant: o.Tenant, Root: x.Root, Docs: docs, SkipOutside: true,
		Text: text(snap, x), MaxBytes: o.MaxBytes, TempDir: o.TempDir, MemoryBytes: o.MemoryBytes})
}

// Hashes returns the hashes of the snapshot's searchable files x covers
// (precisebucket.Covers): only those are read, a fifth of the snapshot
// for one Go module of five.
func Hashes(ctx context.Context, snap repo.View, x repo.PreciseIndex) (map[string][32]byte, error) {
	return repo.Hashes(ctx, snap, func(p string) bool { return precisebucket.Covers(x, p) })
}

// text is how a conversion of x reads a document's text: not at all for
// the Go emitter's (byte columns, made from the files pushed), else from
// the snapshot, as the tools read it (for columns counted in UTF-16, and
// to tell a document the index was not made of).
func text(snap repo.View, x repo.PreciseIndex) func(string) ([]byte, error) {
	if x.Indexer == "goscip" {
		return nil
	}
	return func(p string) ([]byte, error) {
		f, err := repo.ReadSearchable(snap, p)
		if err != nil {
			return nil, err
		}
		if f == nil {
			return nil, fmt.Errorf("%s is not a searchable file", p)
		}
		return f.Content(), nil
	}
}
