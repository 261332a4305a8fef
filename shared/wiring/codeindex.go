package wiring

import (
	"context"
	"path/filepath"

	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
)

// CodeIndexMode is who keeps context_search's code indexes.
type CodeIndexMode string

// The code index modes.
const (
	// CodeIndexLive: this process builds them, in the background, from
	// the repository it serves (Env.Repo), and saves them itself.
	CodeIndexLive CodeIndexMode = "live"
	// CodeIndexStored: the indexer Lambda builds them into the bucket;
	// this process only reads them.
	CodeIndexStored CodeIndexMode = "stored"
)

// CodeIndexes is where a process finds context_search's indexes, and who
// keeps them.
type CodeIndexes struct {
	Mode CodeIndexMode
	// Blobs hold the indexes: the bucket under indexfile.BucketPrefix
	// (CodeIndexStored), or the data directory's folder (CodeIndexLive;
	// in memory when there is no data directory).
	Blobs indexfile.Blobs
	// DefaultRepo is whose code index a tenant without one searches
	// (CodeIndexStored; "" for none).
	DefaultRepo string
	// Tenant is the tenant whose repositories a live process starts
	// indexing at once (the local tenant: every tenant reads the one
	// served repository). A tenant, not a repository's key.
	Tenant string
}

// CodeIndexes chooses the indexes' store and mode: the bucket's, kept by
// the indexer, when TOOLSHED_BUCKET is set; otherwise live, saved in the
// data directory's folder (named folder).
func (e *Env) CodeIndexes(ctx context.Context, folder string) (CodeIndexes, error) {
	if e.Config.Bucket != "" {
		blobs, err := e.IndexBlobs(ctx)
		if err != nil {
			return CodeIndexes{}, err
		}
		return CodeIndexes{Mode: CodeIndexStored, Blobs: blobs, DefaultRepo: e.Config.DefaultRepo}, nil
	}
	idx := CodeIndexes{Mode: CodeIndexLive, Blobs: &indexfile.MemBlobs{}, Tenant: e.Config.LocalTenant}
	if e.Config.DataDir != "" {
		idx.Blobs = &indexfile.DirBlobs{Root: filepath.Join(e.Config.DataDir, folder)}
	}
	return idx, nil
}

// IndexBlobs returns the bucket's code indexes, under
// indexfile.BucketPrefix: those the indexer builds and keeps.
func (e *Env) IndexBlobs(ctx context.Context) (*indexfile.S3Blobs, error) {
	bucket, err := e.S3(ctx)
	if err != nil {
		return nil, err
	}
	return &indexfile.S3Blobs{Bucket: bucket, Prefix: indexfile.BucketPrefix}, nil
}
