package indexfile

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/toolshed/toolshed/shared/objects"
)

// DirBlobs keeps objects as files under a directory (the local data
// directory). ETags are content hashes. Writes go to a temporary file
// that is renamed into place, so readers never see half a file.
type DirBlobs struct {
	Root string
	mu   sync.Mutex // orders conditional writes within the process
}

var _ Blobs = (*DirBlobs)(nil)

func (d *DirBlobs) path(key string) string { return filepath.Join(d.Root, filepath.FromSlash(key)) }

// etagOf is the ETag of an object of DirBlobs or MemBlobs: a hash of its
// content.
func etagOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}

// revalidate answers a Get of DirBlobs or MemBlobs that found data: data
// and its ETag, or ErrNotModified when etag ("" for none) is still data's.
func revalidate(data []byte, etag string) ([]byte, string, error) {
	tag := etagOf(data)
	if etag != "" && etag == tag {
		return nil, tag, ErrNotModified
	}
	return data, tag, nil
}

// matches reports whether a Put's condition, match, lets it replace the
// object cur (exists: there is one) in DirBlobs or MemBlobs.
func matches(match string, cur []byte, exists bool) bool {
	switch match {
	case "":
		return true
	case IfAbsent:
		return !exists
	default:
		return exists && etagOf(cur) == match
	}
}

// Get implements Blobs.
func (d *DirBlobs) Get(_ context.Context, key, etag string) ([]byte, string, error) {
	data, err := os.ReadFile(d.path(key))
	if err != nil {
		return nil, "", fmt.Errorf("read index file %s: %w", key, err)
	}
	return revalidate(data, etag)
}

// Put implements Blobs.
func (d *DirBlobs) Put(_ context.Context, key string, data []byte, match string) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.path(key)
	if match != "" {
		cur, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("write index file %s: %w", key, err)
		}
		if !matches(match, cur, err == nil) {
			return "", fmt.Errorf("write index file %s: %w", key, ErrPrecondition)
		}
	}
	err := writeFile(p, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("write index file %s: %w", key, err)
	}
	return etagOf(data), nil
}

// PutFrom writes the object as write makes it, unconditionally, without
// holding it in memory (the Store writes the files of code indexes with
// it, which may be as large as the repository).
func (d *DirBlobs) PutFrom(_ context.Context, key string, write func(io.Writer) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := writeFile(d.path(key), write); err != nil {
		return fmt.Errorf("write index file %s: %w", key, err)
	}
	return nil
}

// tempPrefix starts the names of files being written.
const tempPrefix = ".tmp-"

// writeFile writes p through a temporary file, flushed to disk and
// renamed into place: after a crash, p is the old file or the new one,
// whole.
func writeFile(p string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), tempPrefix+"*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(tmp, 1<<20)
	werr := write(bw)
	if werr == nil {
		werr = bw.Flush()
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// RemoveOthers deletes the folders under prefix but those of keep, and
// the temporary files writes that were cut short left in prefix and in
// the folders kept.
func (d *DirBlobs) RemoveOthers(prefix string, keep []string) error {
	var errs []error
	remove := func(dir string, unwanted func(e os.DirEntry) bool) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("clean index folder %s: %w", dir, err))
			return
		}
		for _, e := range entries {
			if unwanted(e) {
				errs = append(errs, os.RemoveAll(filepath.Join(dir, e.Name())))
			}
		}
	}
	temporary := func(e os.DirEntry) bool { return !e.IsDir() && strings.HasPrefix(e.Name(), tempPrefix) }
	remove(d.path(prefix), func(e os.DirEntry) bool { return e.IsDir() && !slices.Contains(keep, e.Name()) || temporary(e) })
	for _, k := range keep {
		if _, err := os.Stat(d.path(prefix + "/" + k)); err == nil {
			remove(d.path(prefix+"/"+k), temporary)
		}
	}
	return errors.Join(errs...)
}

// S3Blobs keeps objects in an S3 bucket under a key prefix ("indexes/").
type S3Blobs struct {
	Bucket *objects.Bucket
	Prefix string
}

var _ Blobs = (*S3Blobs)(nil)

// maxIndexObject bounds one index object read from S3.
const maxIndexObject = 4 << 30

// Get implements Blobs with a conditional GET (If-None-Match).
func (b *S3Blobs) Get(ctx context.Context, key, etag string) ([]byte, string, error) {
	return b.Bucket.Read(ctx, b.Prefix+key, etag, maxIndexObject)
}

// Put implements Blobs with a conditional PUT (If-Match, If-None-Match).
func (b *S3Blobs) Put(ctx context.Context, key string, data []byte, match string) (string, error) {
	o := objects.PutOptions{}
	switch match {
	case "":
	case IfAbsent:
		o.IfNoneMatch = "*"
	default:
		o.IfMatch = match
	}
	if strings.HasSuffix(key, ".json") {
		o.ContentType = "application/json"
	}
	return b.Bucket.Put(ctx, b.Prefix+key, data, o)
}

// MemBlobs keeps objects in memory (a local server without a data
// directory, and tests).
type MemBlobs struct {
	mu      sync.Mutex
	objects map[string][]byte
}

var _ Blobs = (*MemBlobs)(nil)

// RemoveOthers deletes the objects in folders under prefix/ but those
// of keep.
func (m *MemBlobs) RemoveOthers(prefix string, keep []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.objects {
		rest, ok := strings.CutPrefix(k, prefix+"/")
		folder, _, inFolder := strings.Cut(rest, "/")
		if ok && inFolder && !slices.Contains(keep, folder) {
			delete(m.objects, k)
		}
	}
	return nil
}

// Get implements Blobs.
func (m *MemBlobs) Get(_ context.Context, key, etag string) ([]byte, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok := m.objects[key]
	if !ok {
		return nil, "", fmt.Errorf("index object %s: %w", key, fs.ErrNotExist)
	}
	return revalidate(data, etag)
}

// Put implements Blobs.
func (m *MemBlobs) Put(_ context.Context, key string, data []byte, match string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur, ok := m.objects[key]; !matches(match, cur, ok) {
		return "", fmt.Errorf("index object %s: %w", key, ErrPrecondition)
	}
	if m.objects == nil {
		m.objects = map[string][]byte{}
	}
	m.objects[key] = data
	return etagOf(data), nil
}
