package githistory

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// incoming is the folder of a copy's packs still coming, beside objects/:
// git never sees a pack before it is whole and checked.
const incoming = "incoming"

// fetchPacks copies the manifest's packs that dir lacks, first checking
// that they fit in the free space.
func (c *copied) fetchPacks(ctx context.Context, b *objects.Bucket, ref reposcope.Ref, dir string, m Manifest) error {
	var missing []Pack
	var have, need int64
	for _, p := range m.Packs {
		if _, err := os.Stat(filepath.Join(dir, "objects", "pack", p.Name+".idx")); err == nil {
			have += p.Bytes + p.IdxBytes
			continue
		}
		missing = append(missing, p)
		got := fileSize(filepath.Join(dir, incoming, p.Name+".idx")) + fileSize(filepath.Join(dir, incoming, p.Name+".pack"))
		have += got
		need += p.Bytes + p.IdxBytes - got
	}
	c.sizes.total.Store(m.Bytes())
	c.sizes.have.Store(have)
	if free, ok := freeBytes(dir); ok && need > free {
		return toolerr.New(toolerr.SizeLimitExceeded,
			"The history of %s needs %d MB more and %s has %d MB free: it cannot be copied here", ref, need>>20, dir, free>>20).
			With("repo", ref.Name).With("neededMB", need>>20).With("freeMB", free>>20)
	}
	for _, p := range missing {
		if err := c.fetchPack(ctx, b, ref, dir, p); err != nil {
			return err
		}
	}
	return nil
}

// fileSize is the size of the file at path, 0 when there is none.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// fetchPack copies one pack and its index into incoming/, checks them and
// moves them into the repository, the index last (git finds a pack by its
// index).
func (c *copied) fetchPack(ctx context.Context, b *objects.Bucket, ref reposcope.Ref, dir string, p Pack) error {
	in := filepath.Join(dir, incoming, p.Name)
	for _, f := range []struct {
		ext  string
		size int64
	}{{".idx", p.IdxBytes}, {".pack", p.Bytes}} {
		err := c.download(ctx, b, PackKey(ref, p.Name, f.ext), in+f.ext, f.size)
		if errors.Is(err, ErrCorrupt) {
			return corrupt(ref, err)
		}
		if err != nil {
			return fmt.Errorf("copy the history of %s: %w", ref, err)
		}
	}
	if err := checkPack(in, p); err != nil {
		os.Remove(in + ".pack")
		os.Remove(in + ".idx")
		return corrupt(ref, err)
	}
	for _, ext := range []string{".pack", ".idx"} {
		if err := os.Rename(in+ext, filepath.Join(dir, "objects", "pack", p.Name+ext)); err != nil {
			return err
		}
	}
	return nil
}

// download copies the object key into path from where an earlier copy
// stopped, until it holds size bytes.
func (c *copied) download(ctx context.Context, b *objects.Bucket, key, path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	off, err := f.Seek(0, io.SeekEnd)
	if err != nil || off == size {
		return err
	}
	if off > size { // not what the manifest says: start again
		if err := f.Truncate(0); err != nil {
			return err
		}
		c.sizes.have.Add(-off)
		off, _ = f.Seek(0, io.SeekStart)
	}
	o, err := b.OpenFrom(ctx, key, "", off)
	if err != nil {
		return err
	}
	defer o.Body.Close()
	if o.Size != size-off {
		return fmt.Errorf("%w: %s has %d bytes from %d, its manifest says %d", ErrCorrupt, key, o.Size, off, size-off)
	}
	n, err := io.Copy(gauged{f, c}, o.Body)
	switch {
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return err
	case n != size-off:
		return fmt.Errorf("%s: %d of %d bytes arrived", key, n, size-off)
	}
	return f.Close()
}

// gauged counts what is written to a copy.
type gauged struct {
	w io.Writer
	c *copied
}

func (g gauged) Write(p []byte) (int, error) {
	n, err := g.w.Write(p)
	g.c.sizes.have.Add(int64(n))
	return n, err
}

// checkPack checks a pack and its index as git wrote them: each ends
// with the hash of what comes before, and the index names the pack's.
func checkPack(base string, p Pack) error {
	newHash := sha1.New
	if len(strings.TrimPrefix(p.Name, "pack-")) == 64 {
		newHash = sha256.New
	}
	packSum, err := trailer(base+".pack", "PACK", newHash)
	if err != nil {
		return fmt.Errorf("%s.pack: %w", p.Name, err)
	}
	if _, err := trailer(base+".idx", "\xfftOc", newHash); err != nil {
		return fmt.Errorf("%s.idx: %w", p.Name, err)
	}
	idx, err := os.ReadFile(base + ".idx")
	if err != nil {
		return err
	}
	n := newHash().Size()
	if !bytes.Equal(idx[len(idx)-2*n:len(idx)-n], packSum) {
		return fmt.Errorf("%s.idx is the index of another pack", p.Name)
	}
	return nil
}

// trailer checks that the file at path starts with magic and ends with
// the hash of the rest, and returns that hash.
func trailer(path, magic string, newHash func() hash.Hash) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	h := newHash()
	n := int64(h.Size())
	if st.Size() < n+int64(len(magic)) {
		return nil, errors.New("too short")
	}
	head := make([]byte, len(magic))
	if _, err := io.ReadFull(f, head); err != nil || string(head) != magic {
		return nil, errors.New("not written by git")
	}
	h.Write(head)
	if _, err := io.Copy(h, io.LimitReader(f, st.Size()-n-int64(len(magic)))); err != nil {
		return nil, err
	}
	sum := make([]byte, n)
	if _, err := io.ReadFull(f, sum); err != nil {
		return nil, err
	}
	if !bytes.Equal(sum, h.Sum(nil)) {
		return nil, errors.New("its content does not match its checksum")
	}
	return sum, nil
}
