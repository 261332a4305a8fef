package repo

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolshed/toolshed/shared/store"
)

// heldReader reads a zip, holding every read once held is set until
// release is closed (reached is closed at the first such read), and
// counts the reads.
type heldReader struct {
	r       *bytes.Reader
	held    atomic.Bool
	reached chan struct{}
	once    sync.Once
	release chan struct{}
	reads   atomic.Int64
}

func (h *heldReader) ReadAt(p []byte, off int64) (int, error) {
	if h.held.Load() {
		h.reads.Add(1)
		h.once.Do(func() { close(h.reached) })
		<-h.release
	}
	return h.r.ReadAt(p, off)
}

// TestSnapshotDoneStopsItsBuild: once a snapshot is done (a push replaced
// it, or it was dropped), the decompression of its files stops, keeping
// nothing, and none starts again: the caller is told to call again.
func TestSnapshotDoneStopsItsBuild(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	const files = 500
	for i := range files {
		w, err := zw.Create(fmt.Sprintf("f%03d.txt", i))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(w, "file %d\n", i)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	r := &heldReader{r: bytes.NewReader(buf.Bytes()), reached: make(chan struct{}), release: make(chan struct{})}
	z, err := openZip(r, int64(buf.Len()), "c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.held.Store(true) // from the first file read on
	result := make(chan error)
	go func() {
		_, err := z.Searchable(context.Background())
		result <- err
	}()
	<-r.reached // the build reads its files
	z.end()
	close(r.release)
	if err := <-result; !errors.Is(err, store.ErrStorage) {
		t.Errorf("Searchable of a snapshot done while it was read: %v, want a storage error (call again)", err)
	}
	// A full build makes several reads a file; each worker finishes the
	// file in hand.
	read := r.reads.Load()
	if read >= files || z.files != nil {
		t.Errorf("the build went on: %d reads for %d files, %d files kept", read, files, len(z.files))
	}
	if _, err := z.Searchable(context.Background()); !errors.Is(err, store.ErrStorage) || r.reads.Load() != read {
		t.Errorf("Searchable once done: %v, %d more reads", err, r.reads.Load()-read)
	}
}
