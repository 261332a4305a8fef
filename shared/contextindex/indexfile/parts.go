package indexfile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex"
)

// A code index built in batches (the deployed indexer's fan-out) is
// stored in parts, each the contextindex.CodeIndex of a run of the
// snapshot's files in path order, and published by its manifest:
//
//	<repo>/<commit>/parts.json          the Manifest
//	<repo>/<commit>/<part>/chunks.bin   per part, the files of a whole index
//	<repo>/<commit>/<part>/lexical.bin
//	<repo>/<commit>/<part>/vectors.bin
//	<repo>/<commit>/<part>/checkpoint.bin  the vectors so far, while the part is embedded
//
// Publish writes the manifest, then the pointer (with Parts set), so a
// reader never sees a pointer to an index that is not whole. A reader
// ranks the parts together (contextindex.NewCodeCollection); no part is
// ever merged into another, so no invocation needs memory for the whole
// index.

// ManifestFile is the manifest of an index built in batches;
// CheckpointFile, a part's vectors while it is embedded (apart from
// vectors.bin, so that a late checkpoint of a batch delivered twice never
// overwrites the vectors of the part done).
const (
	ManifestFile   = "parts.json"
	CheckpointFile = "checkpoint.bin"
)

// Manifest lists the parts of a code index built in batches, in path
// order.
type Manifest struct {
	Commit string `json:"commit"`
	// SnapshotSeq is the number of the snapshot pointer it was built
	// from (Build.SnapshotSeq), which orders publications.
	SnapshotSeq int64      `json:"snapshotSeq,omitempty"`
	BuiltAt     time.Time  `json:"builtAt"`
	Model       string     `json:"model,omitempty"` // "" for a lexical-only index
	Parts       []PartInfo `json:"parts"`
}

// PartInfo says what one part holds and how it was built.
type PartInfo struct {
	Name  string `json:"name"`  // its folder, PartName of its batch
	First string `json:"first"` // its first and last file, in path order
	Last  string `json:"last"`
	Files int    `json:"files"`
	// Chunks are its chunks; Vectors, those with a vector; Failed, those
	// the embedder refused (found lexically only).
	Chunks  int `json:"chunks"`
	Vectors int `json:"vectors"`
	Failed  int `json:"failed,omitempty"`
	// Embedded texts were sent to the embedder for it; Reused vectors
	// came from an earlier build (the same text, by hash).
	Embedded int `json:"embedded,omitempty"`
	Reused   int `json:"reused,omitempty"`
	// Pending are its chunks waiting for a vector: a part is searchable
	// by words as soon as it is built, and embedded after (their vectors
	// are then saved and the part's counts updated).
	Pending int `json:"pending,omitempty"`
}

// PartName is the folder of batch n's part: part-0007.
func PartName(n int) string { return fmt.Sprintf("part-%04d", n) }

// Overlaps reports whether the part holds files in [first, last].
func (p PartInfo) Overlaps(first, last string) bool {
	return p.First <= last && first <= p.Last
}

// Totals returns the sums of the parts' counts, in one PartInfo.
func Totals(parts []PartInfo) PartInfo {
	var t PartInfo
	for _, p := range parts {
		t.Files += p.Files
		t.Chunks += p.Chunks
		t.Vectors += p.Vectors
		t.Failed += p.Failed
		t.Embedded += p.Embedded
		t.Reused += p.Reused
		t.Pending += p.Pending
	}
	return t
}

// partPrefix is where a part's files live; part "" is the whole index of
// the commit (an index stored whole).
func partPrefix(repoKey, commit, part string) (string, error) {
	segs := []string{commit}
	if part != "" {
		segs = append(segs, part)
	}
	if err := checkKey(repoKey, segs...); err != nil {
		return "", err
	}
	prefix := repoKey + "/" + commit + "/"
	if part != "" {
		prefix += part + "/"
	}
	return prefix, nil
}

// SavePart writes a part's files (ix.Vectors too, when it has them).
func (s *Store) SavePart(ctx context.Context, repoKey, commit, part string, ix *contextindex.CodeIndex) error {
	prefix, err := partPrefix(repoKey, commit, part)
	if err != nil {
		return err
	}
	if err := s.saveFiles(ctx, prefix, ix); err != nil {
		return fmt.Errorf("save part %s of %s: %w", part, commit, err)
	}
	return nil
}

// SaveCheckpoint writes the vectors of a part being embedded, which a
// retry resumes from.
func (s *Store) SaveCheckpoint(ctx context.Context, repoKey, commit, part string, v *contextindex.Vectors) error {
	prefix, err := partPrefix(repoKey, commit, part)
	if err != nil {
		return err
	}
	if err := s.put(ctx, prefix+CheckpointFile, v.Encode); err != nil {
		return fmt.Errorf("save the checkpoint of part %s of %s: %w", part, commit, err)
	}
	return nil
}

// Checkpoint reads a part's checkpoint; none is an error wrapping
// fs.ErrNotExist.
func (s *Store) Checkpoint(ctx context.Context, repoKey, commit, part string) (*contextindex.Vectors, error) {
	return s.partVectors(ctx, repoKey, commit, part, CheckpointFile)
}

// PartVectors reads a part's vectors (part "": those of an index stored
// whole); none is an error wrapping fs.ErrNotExist.
func (s *Store) PartVectors(ctx context.Context, repoKey, commit, part string) (*contextindex.Vectors, error) {
	return s.partVectors(ctx, repoKey, commit, part, contextindex.VectorsFile)
}

// partVectors reads a vector file of a part.
func (s *Store) partVectors(ctx context.Context, repoKey, commit, part, file string) (*contextindex.Vectors, error) {
	prefix, err := partPrefix(repoKey, commit, part)
	if err != nil {
		return nil, err
	}
	raw, _, err := s.blobs.Get(ctx, prefix+file, "")
	if err == nil {
		var v *contextindex.Vectors
		if v, err = contextindex.UnmarshalVectors(raw); err == nil {
			return v, nil
		}
	}
	return nil, fmt.Errorf("%s of part %q of %s: %w", file, part, commit, err)
}

// SavePartVectors writes a part's vectors, once it is embedded.
func (s *Store) SavePartVectors(ctx context.Context, repoKey, commit, part string, v *contextindex.Vectors) error {
	prefix, err := partPrefix(repoKey, commit, part)
	if err != nil {
		return err
	}
	if err := s.put(ctx, prefix+contextindex.VectorsFile, v.Encode); err != nil {
		return fmt.Errorf("save the vectors of part %s of %s: %w", part, commit, err)
	}
	return nil
}

// LoadPart reads one part, with its vectors when asked (a lexical search
// needs none, and they may be larger than the rest).
func (s *Store) LoadPart(ctx context.Context, repoKey, commit, part string, vectors bool) (*contextindex.CodeIndex, error) {
	prefix, err := partPrefix(repoKey, commit, part)
	if err != nil {
		return nil, err
	}
	seg, err := s.loadSegment(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("load part %s of %s/%s: %w", part, repoKey, commit, err)
	}
	ix := &contextindex.CodeIndex{Commit: commit, Segment: seg, Files: seg.FileHashes()}
	if !vectors {
		return ix, nil
	}
	if ix.Vectors, err = s.partVectors(ctx, repoKey, commit, part, contextindex.VectorsFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return ix, nil
}

// Manifest reads the manifest of an index built in batches.
func (s *Store) Manifest(ctx context.Context, repoKey, commit string) (Manifest, error) {
	prefix, err := partPrefix(repoKey, commit, "")
	if err != nil {
		return Manifest{}, err
	}
	raw, _, err := s.blobs.Get(ctx, prefix+ManifestFile, "")
	if err != nil {
		return Manifest{}, fmt.Errorf("manifest of %s/%s: %w", repoKey, commit, err)
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return Manifest{}, fmt.Errorf("manifest of %s/%s: %w", repoKey, commit, err)
	}
	if m.Commit != commit {
		return Manifest{}, fmt.Errorf("manifest of %s/%s names commit %q", repoKey, commit, m.Commit)
	}
	for _, p := range m.Parts {
		if err := checkCommit(p.Name); err != nil {
			return Manifest{}, fmt.Errorf("manifest of %s/%s: %w", repoKey, commit, err)
		}
	}
	return m, nil
}

// Publish makes an index built in batches the repository's current one:
// its manifest first, then the pointer. Its parts must be saved. An index
// is published again, the same BuiltAt, as its parts' vectors arrive: the
// pointer's counts change, and readers read the new vectors. The
// pointer only moves forward, with a write conditional on the pointer
// read: when it already names the index of a later snapshot (a higher
// SnapshotSeq) or, of the same snapshot number, one built later (by
// BuiltAt), Publish leaves it and returns false. A pointer to an index of
// another format (which this version does not read) is replaced.
func (s *Store) Publish(ctx context.Context, repoKey string, m Manifest) (bool, error) {
	prefix, err := partPrefix(repoKey, m.Commit, "")
	if err != nil {
		return false, err
	}
	if len(m.Parts) == 0 {
		return false, errors.New("publish an index of no parts")
	}
	raw, _ := json.Marshal(m)
	if _, err := s.blobs.Put(ctx, prefix+ManifestFile, raw, ""); err != nil {
		return false, fmt.Errorf("save the manifest of %s: %w", m.Commit, err)
	}
	t := Totals(m.Parts)
	next, _ := json.Marshal(Pointer{Commit: m.Commit, SnapshotSeq: m.SnapshotSeq, BuiltAt: m.BuiltAt,
		Chunks: t.Chunks, Embedded: t.Vectors, Pending: t.Pending, Model: m.Model, Parts: len(m.Parts), Format: CodeFormat})
	for range maxSaveAttempts {
		cur, etag, err := s.readPointer(ctx, repoKey, "")
		switch {
		case errors.Is(err, fs.ErrNotExist):
			etag = IfAbsent
		case err != nil:
			return false, err
		case cur.Format != CodeFormat:
		case cur.SnapshotSeq > m.SnapshotSeq, cur.SnapshotSeq == m.SnapshotSeq && cur.BuiltAt.After(m.BuiltAt):
			return false, nil
		}
		_, err = s.blobs.Put(ctx, repoKey+"/"+PointerFile, next, etag)
		if !errors.Is(err, ErrPrecondition) {
			if err != nil {
				return false, fmt.Errorf("save the pointer to %s: %w", m.Commit, err)
			}
			return true, nil
		}
	}
	return false, fmt.Errorf("save the pointer to %s: %d conflicting writes in a row", m.Commit, maxSaveAttempts)
}
