package contextindex

import (
	"context"
	"time"
)

// LiveStore keeps a live index between runs, under a key (package
// indexfile's Store does): segments and sets of vectors, each saved once
// under a name of its own, and the record of those that make the index,
// saved after them.
type LiveStore interface {
	// LoadLive reads the record of the index saved under key, its parts
	// (each with its dead files) and its vectors (nil for none). None is an
	// error wrapping fs.ErrNotExist.
	LoadLive(ctx context.Context, key string) (SavedLive, []Part, *Vectors, error)
	SaveSegment(ctx context.Context, key, name string, seg *Segment) error
	SaveVectors(ctx context.Context, key, name string, v *Vectors) error
	// SaveLive makes rec the record of the index saved under key: what it
	// names must be saved already.
	SaveLive(ctx context.Context, key string, rec SavedLive) error
	// Prune removes what the store holds under key that rec does not name.
	Prune(key string, rec SavedLive) error
}

// SavedLive is the record of a saved live index.
type SavedLive struct {
	Version  string // the version of the files indexed (see version)
	BuiltAt  time.Time
	Chunks   int
	Segments []SavedSegment // oldest first
	Model    string         // of the vectors, "" for none
	Vectors  []string       // the names of the sets of vectors
}

// SavedSegment is one segment of a saved live index.
type SavedSegment struct {
	Name string
	// Dead numbers the segment's files (in its order) that are left out:
	// changed or removed since it was saved.
	Dead []int
}

// names returns every name the record uses.
func (rec SavedLive) names() []string {
	var out []string
	for _, s := range rec.Segments {
		out = append(out, s.Name)
	}
	return append(out, rec.Vectors...)
}
