package boltstore

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestAccessFlusherWritesSoonAfterARead: a counted read is written within
// moments, without Close, and a failed flush is tried again.
func TestAccessFlusherWritesSoonAfterARead(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Stores().Access.Record(context.Background(), "acme", "a.go", time.Now()); err != nil {
		t.Fatal(err)
	}
	waitWritten := func() {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			var count int64
			db.bolt.View(func(tx *bolt.Tx) error {
				var rec accessRecord
				_, err := getJSON(nested(tx, bucketAccess, "acme"), []byte("a.go"), &rec)
				count = rec.Count
				return err
			})
			db.access.mu.Lock()
			pending := len(db.access.pending)
			db.access.mu.Unlock()
			if count > 0 && pending == 0 {
				return
			}
		}
		t.Fatal("the counted read was not written")
	}
	waitWritten()

	// A flush that fails (the database is read-only for a moment: a
	// closed bolt handle refuses writes) leaves the count pending and is
	// tried again.
	db.access.mu.Lock()
	db.access.pending[accessKey{"acme", "b.go"}] = accessRecord{Count: 1}
	db.access.mu.Unlock()
	if db.access.flush(&bolt.DB{}) {
		t.Fatal("a flush to a closed database reported success")
	}
	db.access.wake()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		db.access.mu.Lock()
		pending := len(db.access.pending)
		db.access.mu.Unlock()
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the count left pending by a failed flush was never written")
		}
	}
}
