package objects

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"io"
	"sync"
)

// RangeBlock is the unit RangeReader reads and keeps: a ranged GET costs
// about as much for 64 KiB as for one byte, and queries that read near
// each other (a symbol's entry, then its side data written just before
// it) then need one.
const RangeBlock = 64 << 10

// RangeReader reads one version of an object by range (io.ReaderAt, and
// ReadAtContext for readers that pass their context, as precise.Index
// does), keeping the blocks it read in a cache of at most a given number
// of bytes, least recently used out first. A read of more than four
// blocks is read as it is and not kept (an index's tables, read once at
// open). Reads are pinned to the object's ETag: a replaced object is
// ErrPrecondition. It is safe for concurrent use.
type RangeReader struct {
	bucket    *Bucket
	key, etag string
	size      int64
	limit     int64 // bytes of blocks kept at most

	mu     sync.Mutex
	blocks map[int64]*list.Element // by block number; values are *rangeBlock
	recent *list.List              // most recently used first
	held   int64
}

type rangeBlock struct {
	n    int64
	data []byte
}

// NewRangeReader reads the object info describes (its key, size and ETag:
// Head's answer) keeping at most cacheBytes of it (0: none).
func NewRangeReader(b *Bucket, info Info, cacheBytes int64) *RangeReader {
	return &RangeReader{bucket: b, key: info.Key, etag: info.ETag, size: info.Size, limit: cacheBytes,
		blocks: map[int64]*list.Element{}, recent: list.New()}
}

// Size is the object's size.
func (r *RangeReader) Size() int64 { return r.size }

// ReadAt implements io.ReaderAt; its requests are bounded by the client's
// per-attempt timeouts and retries.
func (r *RangeReader) ReadAt(p []byte, off int64) (int, error) {
	return r.ReadAtContext(context.Background(), p, off)
}

// ReadAtContext is ReadAt under ctx.
func (r *RangeReader) ReadAtContext(ctx context.Context, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("objects: negative offset")
	}
	if off >= r.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), r.size-off)
	var err error
	if n > 4*RangeBlock || r.limit <= 0 {
		err = r.readDirect(ctx, p[:n], off)
	} else {
		err = r.readBlocks(ctx, p[:n], off)
	}
	if err != nil {
		return 0, err
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

func (r *RangeReader) readDirect(ctx context.Context, p []byte, off int64) error {
	b, err := r.bucket.ReadRange(ctx, r.key, r.etag, off, int64(len(p)))
	if err == nil {
		copy(p, b)
	}
	return err
}

// readBlocks fills p from the blocks it covers, reading those not kept in
// one request (from the first missing to the last missing).
func (r *RangeReader) readBlocks(ctx context.Context, p []byte, off int64) error {
	first, last := off/RangeBlock, (off+int64(len(p))-1)/RangeBlock
	got := make([][]byte, last-first+1)
	lo, hi := int64(-1), int64(-1)
	for i := range got {
		if got[i] = r.cached(first + int64(i)); got[i] == nil {
			if lo < 0 {
				lo = first + int64(i)
			}
			hi = first + int64(i)
		}
	}
	if lo >= 0 {
		start := lo * RangeBlock
		b, err := r.bucket.ReadRange(ctx, r.key, r.etag, start, min((hi+1)*RangeBlock, r.size)-start)
		if err != nil {
			return err
		}
		for n := lo; n <= hi; n++ {
			// A copy: a kept block holds its own bytes, not the request's.
			block := bytes.Clone(b[(n-lo)*RangeBlock : min((n-lo+1)*RangeBlock, int64(len(b)))])
			got[n-first] = block
			r.keep(n, block)
		}
	}
	for i, block := range got {
		start := (first + int64(i)) * RangeBlock
		copy(p[max(start-off, 0):], block[max(off-start, 0):])
	}
	return nil
}

// cached returns block n if it is kept.
func (r *RangeReader) cached(n int64) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.blocks[n]
	if !ok {
		return nil
	}
	r.recent.MoveToFront(e)
	return e.Value.(*rangeBlock).data
}

// keep adds block n, dropping the least recently used beyond the limit.
func (r *RangeReader) keep(n int64, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.blocks[n]; ok {
		return
	}
	r.blocks[n] = r.recent.PushFront(&rangeBlock{n: n, data: data})
	r.held += int64(len(data))
	for r.held > r.limit && r.recent.Len() > 0 {
		old := r.recent.Remove(r.recent.Back()).(*rangeBlock)
		delete(r.blocks, old.n)
		r.held -= int64(len(old.data))
	}
}
