// Package boltstore implements package store on one embedded bbolt file,
// for local runs (`make run`).
//
// Layout, one top-level bucket per kind:
//
//	tasks/<tenant>/<id as big-endian uint64>  -> JSON task; the tenant
//	                                            bucket's sequence is the id counter
//	memory/<tenant>/<file>/<entry id>          -> JSON entry
//	counters/<key>                             -> JSON {count, expires}
//	access/<tenant>/<path>                     -> JSON {count, last_access}
//	apikeys/<hash>                             -> JSON key
//	idempotency/<tenant>/task/<key>            -> JSON {id}: the task
//	                                            Create made with this key
//	idempotency/<tenant>/memory/<file>/<key>   -> JSON {id}: the entry
//	                                            Append made with this key
//
// bbolt runs one write transaction at a time, so counters and ids are exact.
// A key's record is written in the transaction that makes the task or
// entry, so a write with a key either happens with its record or not at
// all, and a second write with the key only reads.
// Only one process can open the file; a second one fails after a second
// with "database is locked by another process".
package boltstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/toolshed/toolshed/shared/store"
)

// Top-level bucket names.
const (
	bucketTasks    = "tasks"
	bucketMemory   = "memory"
	bucketCounters = "counters"
	bucketAccess   = "access"
	bucketAPIKeys  = "apikeys"
	bucketIdem     = "idempotency"
)

// Kinds of idempotency records, one nested bucket each under the tenant's.
const (
	idemTask   = "task"
	idemMemory = "memory"
)

// buckets are the top-level buckets of the file, one per kind of data.
var buckets = []string{bucketTasks, bucketMemory, bucketCounters, bucketAccess, bucketAPIKeys, bucketIdem}

// createBuckets makes sure every bucket exists, in new files and in files
// made before a bucket was added. A file that has them all is only read,
// so opening an existing store costs no write and no fsync.
func createBuckets(db *bolt.DB) error {
	missing := false
	err := db.View(func(tx *bolt.Tx) error {
		for _, name := range buckets {
			if tx.Bucket([]byte(name)) == nil {
				missing = true
			}
		}
		return nil
	})
	if err != nil || !missing {
		return err
	}
	return db.Update(func(tx *bolt.Tx) error {
		for _, name := range buckets {
			if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		return nil
	})
}

// ErrLocked means another process (usually a running local server) holds
// the database file.
var ErrLocked = errors.New("database is locked by another process")

// openTimeout is how long Open waits for another process's file lock.
const openTimeout = time.Second

// DB is an open bbolt store file.
type DB struct {
	bolt   *bolt.DB
	path   string
	access *accessBuffer
}

// File is the store file inside a data directory (TOOLSHED_DATA_DIR).
const File = "toolshed.db"

// OpenIn opens the store file of the data directory dir.
func OpenIn(dir string) (*DB, error) { return Open(filepath.Join(dir, File)) }

// Open opens (creating if needed) the store file at path and its parent
// directory.
func Open(path string) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("boltstore: create directory for %s: %w", path, err)
	}
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: openTimeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("boltstore: open %s: %w", path, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("boltstore: open %s: %w", path, err)
	}
	err = createBuckets(bdb)
	if err != nil {
		_ = bdb.Close()
		return nil, fmt.Errorf("boltstore: init %s: %w", path, err)
	}
	// Writers arriving within a millisecond share one transaction and fsync.
	bdb.MaxBatchDelay = time.Millisecond
	return &DB{bolt: bdb, path: path, access: newAccessBuffer(bdb)}, nil
}

// Close closes the file and releases its lock.
func (db *DB) Close() error {
	flushErr := db.access.close()
	if err := db.bolt.Close(); err != nil {
		return fmt.Errorf("boltstore: close %s: %w", db.path, err)
	}
	return flushErr
}

// Stores returns the store implementations backed by this file.
func (db *DB) Stores() store.Stores {
	return store.Stores{
		Tasks:    &taskStore{db: db.bolt},
		Memory:   &memoryStore{db: db.bolt},
		Counters: &counterStore{db: db.bolt},
		Access:   &accessStore{db: db.bolt, buf: db.access},
		APIKeys:  &apiKeyStore{db: db.bolt},
	}
}

// view runs a read transaction; update runs a write transaction. Errors that
// already wrap a store sentinel pass through; anything else is a storage
// failure described by op.
// A context that is already done fails the call before it starts.
func view(ctx context.Context, db *bolt.DB, op string, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return wrap(op, err)
	}
	return wrap(op, db.View(fn))
}

// update uses bbolt's Batch, which folds concurrent writers into one
// transaction and one fsync (the rate counter is written on every call).
// fn may run more than once, on a fresh transaction each time, so it must
// only touch the transaction and variables it sets afresh.
// update runs fn in a write transaction, unless ctx ends first: its check
// inside the transaction is the commit point, so a write whose deadline
// passed while it waited for the file's lock is not made (and says so with
// the context's error), and one that passed it commits and answers.
func update(ctx context.Context, db *bolt.DB, op string, fn func(tx *bolt.Tx) error) error {
	return wrap(op, db.Batch(func(tx *bolt.Tx) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fn(tx)
	}))
}

func wrap(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrStorage),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("bolt %s: %w", op, err)
	default:
		return fmt.Errorf("bolt %s: %w: %w", op, store.ErrStorage, err)
	}
}

// getJSON decodes the value at key into v; it reports false if key is absent.
func getJSON(b *bolt.Bucket, key []byte, v any) (bool, error) {
	if b == nil {
		return false, nil
	}
	data := b.Get(key)
	if data == nil {
		return false, nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("decode %q: %w", key, err)
	}
	return true, nil
}

// getExisting decodes the value at key; an absent key (or a nil bucket) is
// store.ErrNotFound.
func getExisting[T any](b *bolt.Bucket, key []byte) (T, error) {
	var v T
	found, err := getJSON(b, key, &v)
	if err != nil {
		return v, err
	}
	if !found {
		return v, store.ErrNotFound
	}
	return v, nil
}

func putJSON(b *bolt.Bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %q: %w", key, err)
	}
	if err := b.Put(key, data); err != nil {
		return fmt.Errorf("put %q: %w", key, err)
	}
	return nil
}

// nested returns the bucket at path under the top-level bucket top, or nil
// if any part is missing.
func nested(tx *bolt.Tx, top string, path ...string) *bolt.Bucket {
	b := tx.Bucket([]byte(top))
	for _, name := range path {
		if b == nil {
			return nil
		}
		b = b.Bucket([]byte(name))
	}
	return b
}

// nestedCreate is nested, creating missing buckets.
func nestedCreate(tx *bolt.Tx, top string, path ...string) (*bolt.Bucket, error) {
	b := tx.Bucket([]byte(top))
	if b == nil {
		return nil, fmt.Errorf("missing bucket %s", top)
	}
	for _, name := range path {
		var err error
		b, err = b.CreateBucketIfNotExists([]byte(name))
		if err != nil {
			return nil, fmt.Errorf("create bucket %q: %w", name, err)
		}
	}
	return b, nil
}

// idemRecord is what an idempotency key maps to: the id of what the first
// write with it made (a task id, a memory entry id).
type idemRecord[T any] struct {
	ID T `json:"id"`
}

// firstWrite looks up key in the idempotency bucket at path (under
// bucketIdem, created if missing) and returns that bucket and the id the
// first write with key made (nil if there was none). A write without a key
// ("") has no bucket and no first write.
func firstWrite[T any](tx *bolt.Tx, key string, path ...string) (*bolt.Bucket, *T, error) {
	if key == "" {
		return nil, nil, nil
	}
	idem, err := nestedCreate(tx, bucketIdem, path...)
	if err != nil {
		return nil, nil, err
	}
	var first idemRecord[T]
	found, err := getJSON(idem, []byte(key), &first)
	if err != nil || !found {
		return idem, nil, err
	}
	return idem, &first.ID, nil
}

// recordFirst notes in idem, the bucket firstWrite returned, that the write
// with key made id; with no bucket (no key) it does nothing.
func recordFirst[T any](idem *bolt.Bucket, key string, id T) error {
	if idem == nil {
		return nil
	}
	return putJSON(idem, []byte(key), idemRecord[T]{ID: id})
}
