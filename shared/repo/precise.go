package repo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/reposcope"
)

// PreciseIndex is one precise index pushed with a snapshot: a SCIP file
// beside the zip (SCIPKey), which the deployed indexer converts into the
// store the navigation tools read (shared/precisebucket); or a project of
// the repository that push found and could not index, and why. The
// pointer names them (Pointer.Precise), so a reader knows what was pushed
// with the snapshot it serves.
type PreciseIndex struct {
	// Root is the folder the index's document paths are relative to,
	// where its indexer ran: its project's folder, slash separated and
	// relative to the repository ("." for its root).
	Root string `json:"root"`
	// Language is the project's language as package sciprun names it
	// (go, typescript, python); "" for an index made elsewhere, whose
	// Languages say what it covers.
	Language string `json:"language,omitempty"`
	// Languages are the languages (shared/language) of an uploaded
	// index's documents in the snapshot.
	Languages []string `json:"languages,omitempty"`
	// Nested are the folders of the projects inside Root whose files are
	// theirs, not this index's (sciprun.Project.Nested).
	Nested []string `json:"nested,omitempty"`
	// Vendored are the Go module vendor folders whose files are this
	// index's (sciprun.Project.Vendored).
	Vendored []string `json:"vendored,omitempty"`
	// Indexer names what made it: goscip, scip-typescript, scip-python,
	// or Uploaded (made elsewhere, e.g. in CI, and pushed with -scip).
	Indexer string `json:"indexer"`
	// Key, SHA256 (hex) and Bytes are the SCIP file's object, content
	// hash and size; Key is "" when push made no index of the project.
	Key    string `json:"key,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Bytes  int64  `json:"bytes,omitempty"`
	// Reason says why push made no index of the project ("" when it made
	// one); Unavailable, that its indexer is not installed where push ran
	// (rather than that it failed).
	Reason      string `json:"reason,omitempty"`
	Unavailable bool   `json:"unavailable,omitempty"`
}

// Uploaded is the Indexer of an index made elsewhere and pushed as a file.
const Uploaded = "upload"

// PreciseFile is a precise index for Publish to push: Index, and File,
// the SCIP file on this machine ("" for a project push could not index).
type PreciseFile struct {
	Index PreciseIndex
	File  string
}

// SCIPKey is the key of the repository's SCIP file of commit whose
// SHA-256 is sha (hex): beside the commit's zip, named by its content so
// that pushing the commit again with another index never overwrites one
// the indexer may be reading.
func SCIPKey(r reposcope.Ref, commit, sha string) string {
	return RepoPrefix(r) + commit + "." + sha[:16] + ".scip"
}

// preciseKey is the key of the list of the precise indexes pushed with
// the repository's snapshot of commit (what its pointer's Precise says),
// which a rollback to the commit puts back in the pointer.
func preciseKey(r reposcope.Ref, commit string) string {
	return RepoPrefix(r) + commit + ".precise.json"
}

// uploadPrecise uploads the SCIP files beside the commit's zip, tagged as
// the zip is, then the list of them, and returns the indexes with their
// keys, hashes and sizes: what the pointer names.
func uploadPrecise(ctx context.Context, b *objects.Bucket, r reposcope.Ref, commit string, files []PreciseFile) ([]PreciseIndex, error) {
	if len(files) == 0 {
		return nil, nil
	}
	out := make([]PreciseIndex, len(files))
	for i, f := range files {
		out[i] = f.Index
		if f.File == "" {
			continue
		}
		sha, size, err := fileSHA256(f.File)
		if err != nil {
			return nil, err
		}
		out[i].Key, out[i].SHA256, out[i].Bytes = SCIPKey(r, commit, sha), sha, size
		if err := uploadFile(ctx, b, out[i].Key, f.File); err != nil {
			return nil, err
		}
	}
	list, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	if _, err := b.Put(ctx, preciseKey(r, commit), list, objects.PutOptions{ContentType: "application/json", Tagging: StateTag + "=" + Current}); err != nil {
		return nil, fmt.Errorf("upload the list of precise indexes: %w", err)
	}
	return out, nil
}

// uploadFile uploads the SCIP file at name to key (in parts when large).
func uploadFile(ctx context.Context, b *objects.Bucket, key, name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := b.Upload(ctx, key, f, objects.PutOptions{ContentType: "application/octet-stream", Tagging: StateTag + "=" + Current}); err != nil {
		return fmt.Errorf("upload %s: %w", key, err)
	}
	return nil
}

// fileSHA256 returns the hex SHA-256 and the size of the file at name.
func fileSHA256(name string) (string, int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// readPrecise returns the list of the precise indexes pushed with the
// repository's snapshot of commit (none when it has no list).
func readPrecise(ctx context.Context, b *objects.Bucket, r reposcope.Ref, commit string) ([]PreciseIndex, error) {
	raw, _, err := b.Read(ctx, preciseKey(r, commit), "", maxPointerBytes)
	if errors.Is(err, objects.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []PreciseIndex
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("decode %s: %w", preciseKey(r, commit), err)
	}
	return out, nil
}

// preciseObjects are the objects of a pointer's precise indexes: its SCIP
// files and their list.
func preciseObjects(r reposcope.Ref, p Pointer) []string {
	if len(p.Precise) == 0 {
		return nil
	}
	keys := []string{preciseKey(r, p.Commit)}
	for _, x := range p.Precise {
		if x.Key != "" {
			keys = append(keys, x.Key)
		}
	}
	return keys
}

// retirePrecise tags the objects of old's precise indexes that cur does
// not name retired, so that the bucket's lifecycle rule expires them with
// old's zip.
func retirePrecise(ctx context.Context, b *objects.Bucket, r reposcope.Ref, old, cur Pointer) error {
	keep := preciseObjects(r, cur)
	var errs []error
	for _, k := range preciseObjects(r, old) {
		if !slices.Contains(keep, k) {
			errs = append(errs, b.Tag(ctx, k, StateTag, Retired))
		}
	}
	return errors.Join(errs...)
}

// PointerOf returns the repository whose snapshot a view is, as its
// source read it (for a tenant without a default repository of its own,
// the deployment's default one: see reposcope.Fallback), and the pointer
// that made it current; false for a view that is not an S3 source's
// snapshot.
func PointerOf(v View) (reposcope.Ref, Pointer, bool) {
	z, ok := v.(*zipSnapshot)
	if !ok || z.repo == "" {
		return reposcope.Ref{}, Pointer{}, false
	}
	r, ok := reposcope.ParseKey(z.repo)
	p := z.pointer.Load()
	if !ok || p == nil {
		return reposcope.Ref{}, Pointer{}, false
	}
	return r, *p, true
}

// Hashes returns the content hash (File.Hash) of each file of the view
// Searchable lists that keep accepts (nil: every one), by path. A zip
// snapshot whose files are not read yet is read one file at a time, only
// those kept, none held, so that it takes little memory and time whatever
// the snapshot's size.
func Hashes(ctx context.Context, v View, keep func(path string) bool) (map[string][32]byte, error) {
	if keep == nil {
		keep = func(string) bool { return true }
	}
	var files []*File
	var err error
	if z, ok := v.(*zipSnapshot); ok && !z.built() {
		files, err = searchable(ctx, z.r, z.policy, func(c candidate) (*File, error) {
			if !keep(c.path) {
				return nil, nil
			}
			data, err := fs.ReadFile(z.r, c.path)
			if err != nil {
				return nil, err
			}
			f := newFile(c.path, data, time.Time{}, false)
			if f != nil {
				f.Hash()
				f.plain = nil // the hash is all that is kept
			}
			return f, nil
		})
	} else {
		files, err = v.Searchable(ctx)
	}
	if err != nil {
		return nil, err
	}
	out := make(map[string][32]byte, len(files))
	for _, f := range files {
		if keep(f.Path) {
			out[f.Path] = f.Hash()
		}
	}
	return out, nil
}
