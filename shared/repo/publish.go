package repo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/reposcope"
)

// Lifecycle tagging: a zip that is no longer current is tagged
// StateTag=Retired, and the bucket's lifecycle rule deletes retired
// snapshots once they are old enough (infra/).
const (
	StateTag = "toolshed-snapshot"
	Current  = "current"
	Retired  = "retired"
)

// Object metadata on each zip, so a rollback can rebuild the pointer.
const (
	metaCommit = "commit"
	metaFiles  = "files"
	metaBytes  = "bytes"
	metaGit    = "git"
	// metaCreated orders snapshots uploaded within the same second (S3's
	// LastModified has one-second resolution).
	metaCreated = "created"
)

// commitPattern is what commit ids may look like: they become parts of
// object keys. (Repositories follow package reposcope.)
var commitPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$`)

// checkCommit refuses a commit that cannot be part of a key.
func checkCommit(commit string) error {
	if !commitPattern.MatchString(commit) || strings.Contains(commit, "..") {
		return fmt.Errorf("commit %q: use letters, digits, '.', '_', '+' and '-' (at most 128, no '..')", commit)
	}
	return nil
}

// PublishInput is what Publish packs.
type PublishInput struct {
	Repo     reposcope.Ref
	Commit   string
	Git      string   // the git commit the files come from (Pointer.Git), "" for none
	Dir      string   // the repository's root
	Paths    []string // files to pack, relative to Dir
	MaxBytes int64    // refuse more than this many bytes of files
	Now      time.Time
	// Precise, when set, is called once the files are packed, before
	// anything is uploaded, with the snapshot as the deployed tools will
	// read it (through Policy); it returns the precise indexes to push
	// with it, which Publish uploads beside the zip after it, before the
	// pointer, which names them (Pointer.Precise).
	Precise func(ctx context.Context, snap View) ([]PreciseFile, error)
	// Policy is the repository policy of the deployed tools, which
	// Precise's snapshot reads through (nil: DefaultDeny alone).
	Policy *Policy
}

// Published is what Publish did.
type Published struct {
	Pointer  Pointer
	Skipped  []string // paths that were not packed (see PackStats)
	Refused  []string // files left out because they hold a secret (see PackStats)
	Previous string   // the zip key the pointer named before, "" for none
	// RetireErr is set when the previous zip (or its precise indexes)
	// could not be tagged retired (the push itself succeeded; they are
	// just kept longer).
	RetireErr error
}

// Publish packs the files into a temporary file, uploads the zip (in
// parts when large, see package objects) and the precise indexes
// PublishInput.Precise gives, and only then moves the repository's
// pointer to them, numbered after the one it replaces (Pointer.Seq): a
// reader sees the old snapshot or the new one, never half of one. The
// previous zip and precise indexes are tagged retired.
//
// An interrupted publish never moves the pointer. Stopped during the
// upload, it leaves no zip (a failed or cancelled upload is aborted).
// Stopped after the upload and before the pointer, it leaves the zip
// unreferenced: List shows it, not current, and publishing the same
// commit again overwrites it and moves the pointer.
func Publish(ctx context.Context, b *objects.Bucket, in PublishInput) (Published, error) {
	if err := in.Repo.Check(); err != nil {
		return Published{}, err
	}
	if err := checkCommit(in.Commit); err != nil {
		return Published{}, err
	}
	zipFile, err := os.CreateTemp("", "toolshed-snapshot-*.zip")
	if err != nil {
		return Published{}, fmt.Errorf("pack: %w", err)
	}
	defer os.Remove(zipFile.Name())
	defer zipFile.Close()
	st, err := Pack(zipFile, in.Dir, in.Paths, in.MaxBytes)
	if err != nil {
		return Published{Skipped: st.Skipped}, err
	}
	zipBytes, err := zipFile.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = zipFile.Seek(0, io.SeekStart)
	}
	if err != nil {
		return Published{Skipped: st.Skipped}, fmt.Errorf("pack: %w", err)
	}
	precise, err := packedPrecise(ctx, in, zipFile, zipBytes)
	if err != nil {
		return Published{Skipped: st.Skipped}, err
	}
	p := Pointer{
		Commit:   in.Commit,
		Git:      in.Git,
		Key:      ZipKey(in.Repo, in.Commit),
		Files:    st.Files,
		Bytes:    st.Bytes,
		ZipBytes: zipBytes,
		Created:  in.Now.UTC(),
	}
	_, err = b.Upload(ctx, p.Key, zipFile, objects.PutOptions{ContentType: "application/zip", Metadata: zipMetadata(p), Tagging: StateTag + "=" + Current})
	if err != nil {
		return Published{Skipped: st.Skipped}, fmt.Errorf("upload %s: %w", p.Key, err)
	}
	if p.Precise, err = uploadPrecise(ctx, b, in.Repo, in.Commit, precise); err != nil {
		return Published{Skipped: st.Skipped}, err
	}
	p, old, err := movePointer(ctx, b, in.Repo, p)
	out := Published{Pointer: p, Skipped: st.Skipped, Refused: st.Refused, Previous: old.Key}
	if err != nil {
		return out, fmt.Errorf("%s is uploaded, but moving %s to it failed (publish the same commit again): %w", p.Key, PointerKey(in.Repo), err)
	}
	out.RetireErr = retire(ctx, b, in.Repo, old, p)
	return out, nil
}

// zipMetadata is what a snapshot's zip carries of its pointer, so that a
// rollback can rebuild the pointer.
func zipMetadata(p Pointer) map[string]string {
	meta := map[string]string{
		metaCommit:  p.Commit,
		metaFiles:   strconv.Itoa(p.Files),
		metaBytes:   strconv.FormatInt(p.Bytes, 10),
		metaCreated: p.Created.Format(time.RFC3339Nano),
	}
	if p.Git != "" {
		meta[metaGit] = p.Git
	}
	return meta
}

// packedPrecise runs in.Precise, when set, on the packed zip.
func packedPrecise(ctx context.Context, in PublishInput, zipFile *os.File, size int64) ([]PreciseFile, error) {
	if in.Precise == nil {
		return nil, nil
	}
	snap, err := OpenZipAt(zipFile, size, in.Commit, in.Policy)
	if err != nil {
		return nil, err
	}
	return in.Precise(ctx, snap)
}

// retire tags what the pointer old named and cur does not, its zip and
// its precise indexes, retired.
func retire(ctx context.Context, b *objects.Bucket, r reposcope.Ref, old, cur Pointer) error {
	var errs []error
	if old.Key != "" && old.Key != cur.Key {
		errs = append(errs, b.Tag(ctx, old.Key, StateTag, Retired))
	}
	errs = append(errs, retirePrecise(ctx, b, r, old, cur))
	return errors.Join(errs...)
}

// ReadPointer returns the repository's pointer; ok is false when there is
// none.
func ReadPointer(ctx context.Context, b *objects.Bucket, r reposcope.Ref) (p Pointer, ok bool, err error) {
	p, _, ok, err = readPointer(ctx, b, r)
	return p, ok, err
}

// readPointer returns the repository's pointer and its ETag; found is
// false when there is none.
func readPointer(ctx context.Context, b *objects.Bucket, r reposcope.Ref) (p Pointer, etag string, found bool, err error) {
	raw, etag, err := b.Read(ctx, PointerKey(r), "", maxPointerBytes)
	if errors.Is(err, objects.ErrNotFound) {
		return Pointer{}, "", false, nil
	}
	if err != nil {
		return Pointer{}, "", false, err
	}
	if p, err = decodePointer(raw, PointerKey(r)); err != nil {
		return Pointer{}, "", false, err
	}
	return p, etag, true, nil
}

// maxMoveAttempts bounds movePointer's rounds when concurrent pushes of
// the repository keep moving its pointer first.
const maxMoveAttempts = 5

// movePointer makes p, numbered after the pointer it replaces (see
// Pointer.Seq), the repository's pointer, with a write conditional on
// that pointer being the one read. It returns p as written and the
// pointer it replaced (zero for none).
func movePointer(ctx context.Context, b *objects.Bucket, r reposcope.Ref, p Pointer) (Pointer, Pointer, error) {
	for range maxMoveAttempts {
		old, etag, found, err := readPointer(ctx, b, r)
		if err != nil {
			return p, Pointer{}, err
		}
		p.Seq = max(old.Seq+1, createdSeq(p))
		body, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			return p, Pointer{}, err
		}
		o := objects.PutOptions{ContentType: "application/json", CacheControl: "no-cache", IfNoneMatch: "*"}
		if found {
			o.IfMatch, o.IfNoneMatch = etag, ""
		}
		_, err = b.Put(ctx, PointerKey(r), body, o)
		if !errors.Is(err, objects.ErrPrecondition) {
			return p, old, err
		}
	}
	return p, Pointer{}, fmt.Errorf("move %s: another push moved it first %d times in a row", PointerKey(r), maxMoveAttempts)
}

// SnapshotInfo is one zip of a repository.
type SnapshotInfo struct {
	Commit   string
	Key      string
	ZipBytes int64
	Modified time.Time
	Current  bool
	// SCIP are the SCIP files beside the zip (SCIPKey): the precise
	// indexes pushed with it (and, until they expire, those of an earlier
	// push of the commit).
	SCIP []objects.Info
}

// List returns the snapshots of the repository r, newest first, marking
// the current one.
func List(ctx context.Context, b *objects.Bucket, r reposcope.Ref) ([]SnapshotInfo, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	cur, _, err := ReadPointer(ctx, b, r)
	if err != nil {
		return nil, err
	}
	objs, err := b.List(ctx, RepoPrefix(r))
	if err != nil {
		return nil, err
	}
	var out []SnapshotInfo
	scip := map[string][]objects.Info{}
	for _, o := range objs {
		name := strings.TrimPrefix(o.Key, RepoPrefix(r))
		if strings.Contains(name, "/") {
			continue
		}
		if rest, ok := strings.CutSuffix(name, ".scip"); ok && len(rest) > 17 {
			scip[rest[:len(rest)-17]] = append(scip[rest[:len(rest)-17]], o)
		}
		if commit, ok := strings.CutSuffix(name, ".zip"); ok {
			out = append(out, SnapshotInfo{Commit: commit, Key: o.Key, ZipBytes: o.Size, Modified: o.Modified, Current: o.Key == cur.Key})
		}
	}
	for i := range out {
		out[i].SCIP = scip[out[i].Commit]
	}
	// Uploads within the same second are ordered by the time Publish
	// recorded on them.
	perSecond := map[int64]int{}
	for _, o := range out {
		perSecond[o.Modified.Unix()]++
	}
	for i := range out {
		if perSecond[out[i].Modified.Unix()] > 1 {
			head, err := b.Head(ctx, out[i].Key)
			if err != nil {
				return nil, err
			}
			if t, err := time.Parse(time.RFC3339Nano, head.Metadata[metaCreated]); err == nil {
				out[i].Modified = t
			}
		}
	}
	slices.SortStableFunc(out, func(a, b SnapshotInfo) int {
		if c := b.Modified.Compare(a.Modified); c != 0 {
			return c
		}
		return strings.Compare(b.Commit, a.Commit)
	})
	return out, nil
}

// ErrNoSnapshot means a rollback target does not exist.
var ErrNoSnapshot = errors.New("no such snapshot")

// Rollback moves the pointer of the repository r to the snapshot of
// commit, or, when commit is "", to the newest snapshot older than the
// current one, with the precise indexes pushed with it. The snapshot left
// is tagged retired and the one chosen current again, with their precise
// indexes.
func Rollback(ctx context.Context, b *objects.Bucket, r reposcope.Ref, commit string, now time.Time) (Pointer, error) {
	if err := r.Check(); err != nil {
		return Pointer{}, err
	}
	if commit == "" {
		list, err := List(ctx, b, r)
		if err != nil {
			return Pointer{}, err
		}
		i := slices.IndexFunc(list, func(s SnapshotInfo) bool { return s.Current })
		if i < 0 || i+1 >= len(list) {
			return Pointer{}, fmt.Errorf("%w: no snapshot older than the current one", ErrNoSnapshot)
		}
		commit = list[i+1].Commit
	}
	if err := checkCommit(commit); err != nil {
		return Pointer{}, err
	}
	key := ZipKey(r, commit)
	head, err := b.Head(ctx, key)
	if errors.Is(err, objects.ErrNotFound) {
		return Pointer{}, fmt.Errorf("%w: %s", ErrNoSnapshot, key)
	}
	if err != nil {
		return Pointer{}, err
	}
	files, _ := strconv.Atoi(head.Metadata[metaFiles])
	size, _ := strconv.ParseInt(head.Metadata[metaBytes], 10, 64)
	p := Pointer{Commit: commit, Git: head.Metadata[metaGit], Key: key, Files: files, Bytes: size, ZipBytes: head.Size, Created: now.UTC()}
	if p.Precise, err = readPrecise(ctx, b, r, commit); err != nil {
		return Pointer{}, err
	}
	for _, k := range append([]string{key}, preciseObjects(r, p)...) {
		if err := b.Tag(ctx, k, StateTag, Current); err != nil {
			return Pointer{}, err
		}
	}
	p, old, err := movePointer(ctx, b, r, p)
	if err != nil {
		return Pointer{}, err
	}
	return p, retire(ctx, b, r, old, p)
}
