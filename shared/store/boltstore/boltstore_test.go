package boltstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/testenv/storetest"
)

// open opens a store file under a fresh temporary directory and closes it
// at cleanup.
func open(t *testing.T, path string) *boltstore.DB {
	t.Helper()
	db, err := boltstore.Open(path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return db
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Stores {
		return open(t, filepath.Join(t.TempDir(), "state", "toolshed.db")).Stores()
	})
}

func TestPersistsAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "toolshed.db")
	ctx := context.Background()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

	db, err := boltstore.Open(path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	for range 2 {
		if _, err := db.Stores().Tasks.Create(ctx, "acme", store.NewTask{Title: "t"}, now); err != nil {
			t.Fatalf("create: %v", err)
		}
	}
	if _, err := db.Stores().Tasks.Delete(ctx, "acme", 2); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	stores := open(t, path).Stores()
	if _, err := stores.Tasks.Get(ctx, "acme", 1); err != nil {
		t.Fatalf("get after reopen: %v", err)
	}
	task, err := stores.Tasks.Create(ctx, "acme", store.NewTask{Title: "t"}, now)
	if err != nil {
		t.Fatalf("create after reopen: %v", err)
	}
	if task.ID != 3 {
		t.Fatalf("id after reopen = %d, want 3 (the counter persists)", task.ID)
	}
}

func TestSecondOpenIsLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "toolshed.db")
	open(t, path)
	start := time.Now()
	db, err := boltstore.Open(path)
	if err == nil {
		_ = db.Close()
		t.Fatal("second open of a locked file succeeded")
	}
	if !strings.Contains(err.Error(), "database is locked by another process") {
		t.Fatalf("second open error = %q, want it to say the database is locked", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("second open took %s", d)
	}
}

func TestOpenFailures(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		path string
	}{
		{"path is a directory", dir},
		{"parent is a file", filepath.Join(file, "sub", "toolshed.db")},
		{"not a bolt file", file},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db, err := boltstore.Open(tc.path)
			if err == nil {
				_ = db.Close()
				t.Fatalf("open %s succeeded", tc.path)
			}
		})
	}
}

func TestClosedDBIsStorageError(t *testing.T) {
	db, err := boltstore.Open(filepath.Join(t.TempDir(), "toolshed.db"))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	stores := db.Stores()
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	ctx := context.Background()
	now := time.Now()
	checks := map[string]func() error{
		"tasks create": func() error { _, err := stores.Tasks.Create(ctx, "a", store.NewTask{Title: "t"}, now); return err },
		"tasks create with key": func() error {
			_, err := stores.Tasks.Create(ctx, "a", store.NewTask{Title: "t", IdempotencyKey: "k"}, now)
			return err
		},
		"tasks get":  func() error { _, err := stores.Tasks.Get(ctx, "a", 1); return err },
		"tasks list": func() error { _, err := stores.Tasks.List(ctx, "a", store.TaskQuery{}); return err },
		"memory append": func() error {
			_, err := stores.Memory.Append(ctx, "a", "f", store.NewEntry{Content: "c"}, now)
			return err
		},
		"memory append with key": func() error {
			_, err := stores.Memory.Append(ctx, "a", "f", store.NewEntry{Content: "c", IdempotencyKey: "k"}, now)
			return err
		},
		"counter":        func() error { _, _, err := stores.Counters.Increment(ctx, "k", 1, now); return err },
		"access record":  func() error { _, err := stores.Access.Record(ctx, "a", "p", now); return err },
		"api key lookup": func() error { _, err := stores.APIKeys.Lookup(ctx, "h"); return err },
	}
	for name, call := range checks {
		if err := call(); !errors.Is(err, store.ErrStorage) {
			t.Errorf("%s on a closed db: error = %v, want ErrStorage", name, err)
		}
	}
}

// TestCanceledContextWritesNothing: a write whose context ended (its
// deadline passed while it waited for the file's lock) is not made, and
// says so with the context's error: not a storage failure.
func TestCanceledContextWritesNothing(t *testing.T) {
	stores := open(t, filepath.Join(t.TempDir(), "toolshed.db")).Stores()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := stores.Tasks.Create(ctx, "a", store.NewTask{Title: "t"}, time.Now())
	if errors.Is(err, store.ErrStorage) || !errors.Is(err, context.Canceled) {
		t.Fatalf("create with canceled context: error = %v, want context.Canceled alone", err)
	}
	page, err := stores.Tasks.List(context.Background(), "a", store.TaskQuery{})
	if err != nil || len(page.Tasks) != 0 {
		t.Errorf("tasks after a cancelled create: %+v, %v", page.Tasks, err)
	}
}

// TestAccessCountsSurviveClose: counted reads are written by the flusher
// and by Close, exactly, even when counted concurrently.
func TestAccessCountsSurviveClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	db, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := db.Stores().Access.Record(ctx, "acme", "src/a.go", at.Add(time.Duration(i)*time.Second)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.Stores().Access.Get(ctx, "acme", "src/a.go")
	if err != nil || got.Count != 100 || !got.LastAccess.Equal(at.Add(99*time.Second)) {
		t.Errorf("after reopening: %+v, %v; want 100 reads, last at +99 s", got, err)
	}
}

// TestOpenAddsIdempotencyBucket: a file made before idempotency keys (no
// idempotency bucket, tasks and entries in it) gets the bucket when opened,
// and keyed writes work beside the old data.
func TestOpenAddsIdempotencyBucket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	old, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = old.Update(func(tx *bolt.Tx) error {
		for _, name := range []string{"tasks", "memory", "counters", "access", "apikeys"} {
			if _, err := tx.CreateBucket([]byte(name)); err != nil {
				return err
			}
		}
		return nil
	})
	if err := errors.Join(err, old.Close()); err != nil {
		t.Fatal(err)
	}

	stores := open(t, path).Stores()
	ctx := context.Background()
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 2 {
		task, err := stores.Tasks.Create(ctx, "acme", store.NewTask{Title: "t", IdempotencyKey: "k"}, now)
		if err != nil || task.ID != 1 || task.Replayed != (i == 1) {
			t.Fatalf("create %d with a key in an old file: %+v, %v", i, task, err)
		}
		e, err := stores.Memory.Append(ctx, "acme", "f", store.NewEntry{Content: "c", IdempotencyKey: "k"}, now)
		if err != nil || e.Replayed != (i == 1) {
			t.Fatalf("append %d with a key in an old file: %+v, %v", i, e, err)
		}
	}
}
