package boltstore

import (
	"bytes"
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/toolshed/toolshed/shared/store"
)

var (
	_ store.Memory   = (*memoryStore)(nil)
	_ store.Counters = (*counterStore)(nil)
	_ store.Access   = (*accessStore)(nil)
	_ store.APIKeys  = (*apiKeyStore)(nil)
)

// ---- memory ----

type memoryStore struct {
	db *bolt.DB
}

type memoryRecord struct {
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"created_at"`
}

func (s *memoryStore) Append(ctx context.Context, tenant, file, content string, now time.Time) (store.MemoryEntry, error) {
	e := store.MemoryEntry{
		Tenant:    tenant,
		File:      file,
		ID:        store.NewMemoryID(now),
		Content:   content,
		CreatedAt: now.UTC(),
	}
	err := update(ctx, s.db, fmt.Sprintf("append memory %s", e.ID), func(tx *bolt.Tx) error {
		b, err := nestedCreate(tx, bucketMemory, tenant, file)
		if err != nil {
			return err
		}
		key := []byte(e.ID)
		if b.Get(key) != nil {
			return fmt.Errorf("memory entry %s exists: %w", e.ID, store.ErrConflict)
		}
		return putJSON(b, key, memoryRecord{Content: e.Content, CreatedAt: e.CreatedAt})
	})
	if err != nil {
		return store.MemoryEntry{}, err
	}
	return e, nil
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

// ---- counters ----

type counterStore struct {
	db *bolt.DB
}

type counterRecord struct {
	Count   int       `json:"count"`
	Expires time.Time `json:"expires"`
}

func (s *counterStore) Increment(ctx context.Context, key string, limit int, expires time.Time) (int, bool, error) {
	if limit <= 0 {
		return 0, false, nil
	}
	var rec counterRecord
	allowed := false
	err := update(ctx, s.db, fmt.Sprintf("increment counter %q", key), func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketCounters))
		if _, err := getJSON(b, []byte(key), &rec); err != nil {
			return err
		}
		if rec.Count >= limit {
			allowed = false
			return nil
		}
		allowed = true
		rec.Count++
		if rec.Expires.IsZero() {
			rec.Expires = expires.UTC()
		}
		return putJSON(b, []byte(key), rec)
	})
	if err != nil {
		return 0, false, err
	}
	if !allowed {
		return limit, false, nil
	}
	return rec.Count, true, nil
}

// ---- access ----

type accessStore struct {
	db *bolt.DB
}

type accessRecord struct {
	Count      int64     `json:"count"`
	LastAccess time.Time `json:"last_access"`
}

func (s *accessStore) Record(ctx context.Context, tenant, path string, at time.Time) (store.AccessStat, error) {
	var rec accessRecord
	err := update(ctx, s.db, fmt.Sprintf("record access %q", path), func(tx *bolt.Tx) error {
		b, err := nestedCreate(tx, bucketAccess, tenant)
		if err != nil {
			return err
		}
		if _, err := getJSON(b, []byte(path), &rec); err != nil {
			return err
		}
		rec.Count++
		rec.LastAccess = at.UTC()
		return putJSON(b, []byte(path), rec)
	})
	if err != nil {
		return store.AccessStat{}, err
	}
	return store.AccessStat{Tenant: tenant, Path: path, Count: rec.Count, LastAccess: rec.LastAccess}, nil
}

func (s *accessStore) Get(ctx context.Context, tenant, path string) (store.AccessStat, error) {
	var rec accessRecord
	err := view(ctx, s.db, fmt.Sprintf("get access %q", path), func(tx *bolt.Tx) error {
		ok, err := getJSON(nested(tx, bucketAccess, tenant), []byte(path), &rec)
		if err != nil {
			return err
		}
		if !ok {
			return store.ErrNotFound
		}
		return nil
	})
	if err != nil {
		return store.AccessStat{}, err
	}
	return store.AccessStat{Tenant: tenant, Path: path, Count: rec.Count, LastAccess: rec.LastAccess}, nil
}

// ---- api keys ----

type apiKeyStore struct {
	db *bolt.DB
}

type apiKeyRecord struct {
	Hash      string     `json:"hash"`
	Tenant    string     `json:"tenant"`
	Name      string     `json:"name"`
	Scopes    []string   `json:"scopes"`
	CreatedAt time.Time  `json:"created_at"`
	Revoked   bool       `json:"revoked"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

func (r apiKeyRecord) key() store.APIKey {
	return store.APIKey{
		Hash:      r.Hash,
		Tenant:    r.Tenant,
		Name:      r.Name,
		Scopes:    append([]string{}, r.Scopes...),
		CreatedAt: r.CreatedAt,
		Revoked:   r.Revoked,
		RevokedAt: r.RevokedAt,
	}
}

func (s *apiKeyStore) Create(ctx context.Context, k store.APIKey) error {
	rec := apiKeyRecord{
		Hash:      k.Hash,
		Tenant:    k.Tenant,
		Name:      k.Name,
		Scopes:    append([]string{}, k.Scopes...),
		CreatedAt: k.CreatedAt.UTC(),
		Revoked:   k.Revoked,
	}
	if k.RevokedAt != nil {
		t := k.RevokedAt.UTC()
		rec.RevokedAt = &t
	}
	return update(ctx, s.db, "create api key", func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketAPIKeys))
		if b.Get([]byte(k.Hash)) != nil {
			return fmt.Errorf("api key exists: %w", store.ErrConflict)
		}
		return putJSON(b, []byte(k.Hash), rec)
	})
}

func (s *apiKeyStore) Lookup(ctx context.Context, hash string) (store.APIKey, error) {
	var rec apiKeyRecord
	err := view(ctx, s.db, "lookup api key", func(tx *bolt.Tx) error {
		ok, err := getJSON(tx.Bucket([]byte(bucketAPIKeys)), []byte(hash), &rec)
		if err != nil {
			return err
		}
		if !ok {
			return store.ErrNotFound
		}
		return nil
	})
	if err != nil {
		return store.APIKey{}, err
	}
	return rec.key(), nil
}

func (s *apiKeyStore) List(ctx context.Context) ([]store.APIKey, error) {
	keys := []store.APIKey{}
	err := view(ctx, s.db, "list api keys", func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketAPIKeys))
		return b.ForEach(func(k, _ []byte) error {
			var rec apiKeyRecord
			if _, err := getJSON(b, k, &rec); err != nil {
				return err
			}
			keys = append(keys, rec.key())
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	store.SortAPIKeys(keys)
	return keys, nil
}

func (s *apiKeyStore) Revoke(ctx context.Context, hash string, at time.Time) (store.APIKey, error) {
	var rec apiKeyRecord
	err := update(ctx, s.db, "revoke api key", func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketAPIKeys))
		ok, err := getJSON(b, []byte(hash), &rec)
		if err != nil {
			return err
		}
		if !ok {
			return store.ErrNotFound
		}
		rec.Revoked = true
		if rec.RevokedAt == nil {
			t := at.UTC()
			rec.RevokedAt = &t
		}
		return putJSON(b, []byte(hash), rec)
	})
	if err != nil {
		return store.APIKey{}, err
	}
	return rec.key(), nil
}
