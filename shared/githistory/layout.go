package githistory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/reposcope"
)

// A repository's pushed history lives in the bucket under
// history/<Ref.Key>/ (Push writes it, Published reads it):
//
//	pack-<id>.pack, pack-<id>.idx  the packs git made, each with its index
//	manifest.json                  the Manifest, written last
//
// A push uploads its pack and index first and the manifest last, with a
// write conditional on the manifest it read: a reader sees the old
// manifest or the new one, each naming only packs that are whole. Nothing
// under history/ is ever deleted by the server.
const (
	// BucketPrefix is where every history lives (a deployed function
	// reading histories is granted it).
	BucketPrefix = "history/"
	// ManifestName is the manifest inside a repository's folder.
	ManifestName = "manifest.json"
	// ManifestVersion is the layout a manifest describes.
	ManifestVersion = 1
)

// Bounds of what a manifest may hold: it is read from a bucket that users
// write to.
const (
	maxManifestBytes = 16 << 20
	maxPacks         = 10000
	maxPackBytes     = 64 << 30
	maxRefs          = 100000
	maxShallow       = 1000000
)

// Folder is the folder of the repository r's history.
func Folder(r reposcope.Ref) string { return BucketPrefix + r.Key() + "/" }

// ManifestKey is the key of the repository r's manifest.
func ManifestKey(r reposcope.Ref) string { return Folder(r) + ManifestName }

// PackKey is the key of a pack's file: ext is ".pack" or ".idx".
func PackKey(r reposcope.Ref, pack, ext string) string { return Folder(r) + pack + ext }

// Manifest is what a repository's history in the bucket holds.
type Manifest struct {
	Version int `json:"version"`
	// Packs are the packs in the order they were pushed; together they
	// hold every object of every commit uploaded.
	Packs []Pack `json:"packs"`
	// Shallow are the uploaded commits whose parents were not uploaded
	// (the bound of a push cut the history there): git reads them as
	// having none.
	Shallow []string `json:"shallow,omitempty"`
	// Refs are the branches and tags whose commits are uploaded, as the
	// last push saw them.
	Refs []PushedRef `json:"refs,omitempty"`
	// Tips are the commits pushed whose history is uploaded, none an
	// ancestor of another: what the next push leaves out.
	Tips []string `json:"tips"`
	// Commits is how many commits the packs hold.
	Commits int `json:"commits"`
}

// Pack is one pack of a manifest.
type Pack struct {
	Name     string    `json:"name"` // "pack-<id>"
	Bytes    int64     `json:"bytes"`
	IdxBytes int64     `json:"idxBytes"`
	Tip      string    `json:"tip"`     // the commit pushed
	Commits  int       `json:"commits"` // the commits it added
	Bound    Bound     `json:"bound"`   // what bounded them
	Pushed   time.Time `json:"pushed"`
}

// Bound is what limits the commits a push uploads; zero: all of them.
type Bound struct {
	Depth int       `json:"depth,omitempty"` // at most this many commits
	Since time.Time `json:"since,omitzero"`  // none older than this (committer date)
}

// PushedRef is a branch or tag of a manifest.
type PushedRef struct {
	Name   string `json:"name"`   // "refs/heads/main", "refs/tags/v1.0"
	Object string `json:"object"` // what it names: the commit, or an annotated tag
	Commit string `json:"commit"` // the commit, a tag peeled
}

var (
	packName = regexp.MustCompile(`^pack-([0-9a-f]{40}|[0-9a-f]{64})$`)
	// refName is what a pushed ref may be named: it becomes a line of
	// packed-refs, so no space or control character, and no part git
	// would read otherwise.
	refName = regexp.MustCompile(`^refs/(heads|tags)/[A-Za-z0-9._/+@-]{1,200}$`)
)

// DecodeManifest decodes and checks a manifest, so that nothing in it can
// name a file outside its folder, put a line of its own in packed-refs or
// make a reader fetch without bound.
func DecodeManifest(raw []byte) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return Manifest{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if err := m.check(); err != nil {
		return Manifest{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return m, nil
}

// ErrCorrupt means a history in the bucket is not as Push writes it.
var ErrCorrupt = errors.New("the pushed history is corrupt")

func (m Manifest) check() error {
	switch {
	case m.Version != ManifestVersion:
		return fmt.Errorf("version %d, want %d", m.Version, ManifestVersion)
	case len(m.Packs) == 0 || len(m.Packs) > maxPacks:
		return fmt.Errorf("%d packs", len(m.Packs))
	case len(m.Refs) > maxRefs || len(m.Shallow) > maxShallow || len(m.Tips) == 0 || len(m.Tips) > maxPacks:
		return fmt.Errorf("%d refs, %d shallow commits, %d tips", len(m.Refs), len(m.Shallow), len(m.Tips))
	}
	seen := map[string]bool{}
	for _, p := range m.Packs {
		if !packName.MatchString(p.Name) || seen[p.Name] || p.Bytes < 32 || p.Bytes > maxPackBytes || p.IdxBytes < 32 || p.IdxBytes > maxPackBytes || !isID(p.Tip) {
			return fmt.Errorf("pack %q (%d bytes, index %d bytes, tip %q)", p.Name, p.Bytes, p.IdxBytes, p.Tip)
		}
		seen[p.Name] = true
	}
	for _, ids := range [][]string{m.Shallow, m.Tips} {
		for _, id := range ids {
			if !isID(id) {
				return fmt.Errorf("commit id %q", id)
			}
		}
	}
	for _, r := range m.Refs {
		if !refName.MatchString(r.Name) || strings.Contains(r.Name, "..") || strings.HasSuffix(r.Name, ".lock") || !isID(r.Object) || !isID(r.Commit) {
			return fmt.Errorf("ref %q (%q, %q)", r.Name, r.Object, r.Commit)
		}
	}
	return nil
}

// Bytes is the size of every pack and index of the manifest.
func (m Manifest) Bytes() int64 {
	var n int64
	for _, p := range m.Packs {
		n += p.Bytes + p.IdxBytes
	}
	return n
}

// ReadManifest returns the repository r's manifest and its ETag; found is
// false when its history was never pushed. With ifNoneMatch (an ETag the
// caller holds) an unchanged manifest is objects.ErrNotModified.
func ReadManifest(ctx context.Context, b *objects.Bucket, r reposcope.Ref, ifNoneMatch string) (m Manifest, etag string, found bool, err error) {
	raw, etag, err := b.Read(ctx, ManifestKey(r), ifNoneMatch, maxManifestBytes)
	if errors.Is(err, objects.ErrNotFound) {
		return Manifest{}, "", false, nil
	}
	if err != nil {
		return Manifest{}, "", false, err
	}
	if m, err = DecodeManifest(raw); err != nil {
		return Manifest{}, "", false, fmt.Errorf("%s: %w", ManifestKey(r), err)
	}
	return m, etag, true, nil
}
