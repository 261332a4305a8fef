package objects_test

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
)

// TestBucket runs the package on moto_server: reads and writes, their
// conditions, and how each failure is told.
func TestBucket(t *testing.T) {
	m := emulator.StartMoto(t)
	b := objects.New(m.S3(), m.NewBucket(t))
	ctx := context.Background()

	tag, err := b.Put(ctx, "a/one.txt", []byte("one"), objects.PutOptions{ContentType: "text/plain", Metadata: map[string]string{"k": "v"}})
	if err != nil || tag == "" {
		t.Fatalf("put: %q, %v", tag, err)
	}
	data, got, err := b.Read(ctx, "a/one.txt", "", 100)
	if err != nil || string(data) != "one" || got != tag {
		t.Fatalf("read: %q %q %v", data, got, err)
	}
	if _, _, err := b.Read(ctx, "a/one.txt", tag, 100); !errors.Is(err, objects.ErrNotModified) {
		t.Errorf("conditional read of an unchanged object: %v, want ErrNotModified", err)
	}
	if _, _, err := b.Read(ctx, "a/one.txt", "", 2); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("read over the limit: %v", err)
	}
	if _, _, err := b.Read(ctx, "a/missing.txt", "", 100); !errors.Is(err, objects.ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing object: %v, want ErrNotFound", err)
	}
	if _, err := b.Put(ctx, "a/one.txt", []byte("x"), objects.PutOptions{IfNoneMatch: "*"}); !errors.Is(err, objects.ErrPrecondition) {
		t.Errorf("If-None-Match on an existing object: %v, want ErrPrecondition", err)
	}
	if _, err := b.Put(ctx, "a/one.txt", []byte("x"), objects.PutOptions{IfMatch: `"nope"`}); !errors.Is(err, objects.ErrPrecondition) {
		t.Errorf("If-Match on another ETag: %v, want ErrPrecondition", err)
	}
	if info, err := b.Head(ctx, "a/one.txt"); err != nil || info.Size != 3 || info.Metadata["k"] != "v" {
		t.Errorf("head: %+v, %v", info, err)
	}
	b.Put(ctx, "a/two.txt", []byte("two"), objects.PutOptions{})
	if list, err := b.List(ctx, "a/"); err != nil || len(list) != 2 || list[0].Key != "a/one.txt" || list[1].Size != 3 {
		t.Errorf("list: %+v, %v", list, err)
	}
	if err := b.Tag(ctx, "a/one.txt", "state", "kept"); err != nil {
		t.Errorf("tag: %v", err)
	}

	// Failures of the storage itself wrap store.ErrStorage and say which.
	missing := objects.New(m.S3(), "no-such-bucket-here")
	if _, _, err := missing.Read(ctx, "x", "", 10); !errors.Is(err, store.ErrStorage) || !strings.Contains(err.Error(), "no-such-bucket-here/x: the S3 bucket does not exist") {
		t.Errorf("a missing bucket: %v", err)
	}
	// A write sent to a server that hangs may or may not be applied.
	must(t, m.Process.Stop())
	hung, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = b.Put(hung, "a/three.txt", []byte("3"), objects.PutOptions{})
	cancel()
	hung, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
	_, _, rerr := b.Read(hung, "a/one.txt", "", 10)
	cancel()
	must(t, m.Process.Continue())
	if !errors.Is(err, store.ErrStorage) || !errors.Is(err, store.ErrMaybeDone) || !strings.Contains(err.Error(), "S3 did not answer") {
		t.Errorf("a write to a hung S3: %v, want ErrStorage and ErrMaybeDone", err)
	}
	if !errors.Is(rerr, store.ErrStorage) || errors.Is(rerr, store.ErrMaybeDone) {
		t.Errorf("a read from a hung S3: %v, want ErrStorage alone", rerr)
	}
	// One that cannot connect changed nothing.
	m.Process.Kill()
	_, err = b.Put(ctx, "a/four.txt", []byte("4"), objects.PutOptions{})
	if !errors.Is(err, store.ErrStorage) || errors.Is(err, store.ErrMaybeDone) || !strings.Contains(err.Error(), "cannot be reached") {
		t.Errorf("a write to a stopped S3: %v, want ErrStorage alone, saying it cannot be reached", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
