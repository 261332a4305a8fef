package indexfile

import (
	"context"

	"github.com/toolshed/toolshed/shared/contextindex"
)

// A live index (contextindex.Live, the local server's) is saved as it
// changes: its record is a Pointer with Segments, each segment and set of
// vectors saved once under a name of its own (see Store).

var _ contextindex.LiveStore = (*Store)(nil)

// LoadLive implements contextindex.LiveStore: the index the repository's
// pointer names (one saved whole is one segment, named by its commit).
func (s *Store) LoadLive(ctx context.Context, repoKey string) (contextindex.SavedLive, []contextindex.Part, *contextindex.Vectors, error) {
	p, _, err := s.Pointer(ctx, repoKey, "")
	if err != nil {
		return contextindex.SavedLive{}, nil, nil, err
	}
	parts, vectors, err := s.loadParts(ctx, repoKey, p)
	if err != nil {
		return contextindex.SavedLive{}, nil, nil, err
	}
	rec := contextindex.SavedLive{Version: p.Commit, BuiltAt: p.BuiltAt, Chunks: p.Chunks, Model: p.Model}
	for _, seg := range p.segments() {
		rec.Segments = append(rec.Segments, contextindex.SavedSegment{Name: seg.Name, Dead: seg.Dead})
	}
	rec.Vectors, _ = p.vectorSets()
	return rec, parts, vectors, nil
}

// SaveLive implements contextindex.LiveStore: it saves rec as the
// repository's pointer.
func (s *Store) SaveLive(ctx context.Context, repoKey string, rec contextindex.SavedLive) error {
	return s.savePointer(ctx, repoKey, livePointer(rec))
}

// Prune removes what the repository's folder holds besides rec's segments and
// vectors, the pointer and memory vectors, where the Blobs can (a local
// directory or memory; S3 keeps old indexes, which warm readers may still
// be loading).
func (s *Store) Prune(repoKey string, rec contextindex.SavedLive) error {
	if r, ok := s.blobs.(interface {
		RemoveOthers(prefix string, keep []string) error
	}); ok {
		return r.RemoveOthers(repoKey, append(livePointer(rec).names(), memoryFolder))
	}
	return nil
}

// livePointer is the pointer that saves a live index's record.
func livePointer(rec contextindex.SavedLive) Pointer {
	p := Pointer{Commit: rec.Version, BuiltAt: rec.BuiltAt, Chunks: rec.Chunks, Model: rec.Model, Vectors: rec.Vectors}
	for _, seg := range rec.Segments {
		p.Segments = append(p.Segments, StoredSegment{Name: seg.Name, Dead: seg.Dead})
	}
	return p
}
