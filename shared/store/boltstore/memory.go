package boltstore

import (
	"bytes"
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/toolshed/toolshed/shared/store"
)

var _ store.Memory = (*memoryStore)(nil)

type memoryStore struct {
	db *bolt.DB
}

type memoryRecord struct {
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
}

func (s *memoryStore) Append(ctx context.Context, tenant, file string, ne store.NewEntry, now time.Time) (store.MemoryEntry, error) {
	e := store.NewMemoryEntry(tenant, file, ne.Content, now)
	var replay *store.MemoryEntry
	err := update(ctx, s.db, fmt.Sprintf("append memory %s", e.ID), func(tx *bolt.Tx) error {
		replay = nil
		idem, first, err := firstWrite[string](tx, ne.IdempotencyKey, tenant, idemMemory, file)
		if err != nil {
			return err
		}
		if first != nil {
			replay, err = loadEntry(nested(tx, bucketMemory, tenant, file), tenant, file, *first)
			return err
		}
		b, err := nestedCreate(tx, bucketMemory, tenant, file)
		if err != nil {
			return err
		}
		key := []byte(e.ID)
		if b.Get(key) != nil {
			return fmt.Errorf("memory entry %s exists: %w", e.ID, store.ErrConflict)
		}
		if err := putJSON(b, key, memoryRecord{Content: e.Content, CreatedAt: e.CreatedAt}); err != nil {
			return err
		}
		return recordFirst(idem, ne.IdempotencyKey, e.ID)
	})
	if err != nil {
		return store.MemoryEntry{}, err
	}
	if replay != nil {
		return *replay, nil
	}
	return e, nil
}

// loadEntry reads the entry an earlier Append with the same idempotency
// key made, marked Replayed. Entries are never deleted, so a missing one
// means the file is damaged.
func loadEntry(b *bolt.Bucket, tenant, file, id string) (*store.MemoryEntry, error) {
	var rec memoryRecord
	found, err := getJSON(b, []byte(id), &rec)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("the entry appended with this idempotency key (id %s) is missing: %w", id, store.ErrNotFound)
	}
	return &store.MemoryEntry{Tenant: tenant, File: file, ID: id, Content: rec.Content, CreatedAt: rec.CreatedAt, Replayed: true}, nil
}

func (s *memoryStore) List(ctx context.Context, tenant, file string, q store.MemoryQuery) (store.MemoryPage, error) {
	limit := store.PageLimit(q.Limit)
	page := store.MemoryPage{Entries: []store.MemoryEntry{}}
	err := view(ctx, s.db, "list memory", func(tx *bolt.Tx) error {
		b := nested(tx, bucketMemory, tenant, file)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		k, v := c.First()
		if q.After != "" {
			k, v = c.Seek([]byte(q.After))
			if k != nil && bytes.Equal(k, []byte(q.After)) {
				k, v = c.Next()
			}
		}
		for ; k != nil; k, v = c.Next() {
			if v == nil {
				continue
			}
			if len(page.Entries) == limit { // one more exists
				page.Next = page.Entries[limit-1].ID
				return nil
			}
			var rec memoryRecord
			if _, err := getJSON(b, k, &rec); err != nil {
				return err
			}
			page.Entries = append(page.Entries, store.MemoryEntry{
				Tenant:    tenant,
				File:      file,
				ID:        string(k),
				Content:   rec.Content,
				CreatedAt: rec.CreatedAt,
			})
		}
		return nil
	})
	if err != nil {
		return store.MemoryPage{}, err
	}
	return page, nil
}
