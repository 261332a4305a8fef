package boltstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/toolshed/toolshed/shared/store"
)

var _ store.Access = (*accessStore)(nil)

// flushEvery is how long counted reads wait before they are written.
const flushEvery = 100 * time.Millisecond

type accessStore struct {
	db  *bolt.DB
	buf *accessBuffer
}

type accessRecord struct {
	Count      int64     `json:"count"`
	LastAccess time.Time `json:"last_access"`
}

// accessKey names one tenant's path.
type accessKey struct{ tenant, path string }

// accessBuffer keeps the reads counted since the last flush. Counting a
// read is then a read transaction and a map update, not a write
// transaction with its fsync on the caller's path: read_file answers in
// well under a millisecond. A flusher writes the counts flushEvery after
// the first one since the last flush, all in one transaction, and Close
// writes what is left, so counts stay exact; a crash loses at most the
// last flushEvery of them. Without reads the flusher sleeps. The flush
// holds the lock while it writes, so a read counted meanwhile waits for
// that one transaction (at most one fsync per flushEvery).
type accessBuffer struct {
	mu      sync.Mutex
	pending map[accessKey]accessRecord // counts to add, latest access
	kick    chan struct{}              // a count is pending
	stop    chan struct{}
	done    chan struct{}
	err     error // the last flush's failure, reported by Close
}

func newAccessBuffer(db *bolt.DB) *accessBuffer {
	b := &accessBuffer{pending: map[accessKey]accessRecord{}, kick: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		for {
			select {
			case <-b.kick:
			case <-b.stop:
				b.flush(db)
				return
			}
			select {
			case <-time.After(flushEvery):
				if !b.flush(db) {
					b.wake() // failed: try again in a while
				}
			case <-b.stop:
				b.flush(db)
				return
			}
		}
	}()
	return b
}

// wake tells the flusher a count is pending.
func (b *accessBuffer) wake() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// flush writes the pending counts in one transaction; on failure they stay
// pending for the next one, and it reports false.
func (b *accessBuffer) flush(db *bolt.DB) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) == 0 {
		return true
	}
	err := db.Update(func(tx *bolt.Tx) error {
		for k, add := range b.pending {
			bk, err := nestedCreate(tx, bucketAccess, k.tenant)
			if err != nil {
				return err
			}
			var rec accessRecord
			if _, err := getJSON(bk, []byte(k.path), &rec); err != nil {
				return err
			}
			rec.Count += add.Count
			if add.LastAccess.After(rec.LastAccess) {
				rec.LastAccess = add.LastAccess
			}
			if err := putJSON(bk, []byte(k.path), rec); err != nil {
				return err
			}
		}
		return nil
	})
	b.err = err
	if err == nil {
		clear(b.pending)
	}
	return err == nil
}

// close flushes what is pending and stops the flusher.
func (b *accessBuffer) close() error {
	close(b.stop)
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return fmt.Errorf("boltstore: write access counts: %w", b.err)
	}
	return nil
}

func (s *accessStore) Record(ctx context.Context, tenant, path string, at time.Time) (store.AccessStat, error) {
	s.buf.mu.Lock()
	defer s.buf.mu.Unlock()
	stored, err := s.stored(ctx, tenant, path)
	if err != nil {
		return store.AccessStat{}, err
	}
	k := accessKey{tenant, path}
	add := s.buf.pending[k]
	add.Count++
	if t := at.UTC(); t.After(add.LastAccess) {
		add.LastAccess = t
	}
	s.buf.pending[k] = add
	s.buf.wake()
	return merged(tenant, path, stored, add), nil
}

func (s *accessStore) Get(ctx context.Context, tenant, path string) (store.AccessStat, error) {
	s.buf.mu.Lock()
	defer s.buf.mu.Unlock()
	stored, err := s.stored(ctx, tenant, path)
	if err != nil {
		return store.AccessStat{}, err
	}
	add, ok := s.buf.pending[accessKey{tenant, path}]
	if stored.Count == 0 && !ok {
		return store.AccessStat{}, fmt.Errorf("access %q: %w", path, store.ErrNotFound)
	}
	return merged(tenant, path, stored, add), nil
}

// stored reads the written record (a zero one when there is none).
func (s *accessStore) stored(ctx context.Context, tenant, path string) (accessRecord, error) {
	var rec accessRecord
	err := view(ctx, s.db, fmt.Sprintf("get access %q", path), func(tx *bolt.Tx) error {
		_, err := getJSON(nested(tx, bucketAccess, tenant), []byte(path), &rec)
		return err
	})
	return rec, err
}

func merged(tenant, path string, stored, add accessRecord) store.AccessStat {
	last := stored.LastAccess
	if add.LastAccess.After(last) {
		last = add.LastAccess
	}
	return store.AccessStat{Tenant: tenant, Path: path, Count: stored.Count + add.Count, LastAccess: last}
}
