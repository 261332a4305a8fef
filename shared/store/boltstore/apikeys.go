package boltstore

import (
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/toolshed/toolshed/shared/store"
)

var _ store.APIKeys = (*apiKeyStore)(nil)

type apiKeyStore struct {
	db *bolt.DB
}

type apiKeyRecord struct {
	Hash      string     `json:"hash"`
	Tenant    string     `json:"tenant"`
	Name      string     `json:"name"`
	CreatedAt time.Time  `json:"created_at"`
	Revoked   bool       `json:"revoked"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	Repos     []string   `json:"repos,omitempty"`
}

func (r apiKeyRecord) key() store.APIKey {
	return store.APIKey{
		Hash:      r.Hash,
		Tenant:    r.Tenant,
		Name:      r.Name,
		CreatedAt: r.CreatedAt,
		Revoked:   r.Revoked,
		RevokedAt: r.RevokedAt,
		Repos:     r.Repos,
	}
}

func (s *apiKeyStore) Create(ctx context.Context, k store.APIKey) error {
	rec := apiKeyRecord{
		Hash:      k.Hash,
		Tenant:    k.Tenant,
		Name:      k.Name,
		CreatedAt: k.CreatedAt.UTC(),
		Revoked:   k.Revoked,
		Repos:     k.Repos,
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
		var err error
		rec, err = loadKey(tx.Bucket([]byte(bucketAPIKeys)), hash)
		return err
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
		var err error
		rec, err = loadKey(b, hash)
		if err != nil {
			return err
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

func (s *apiKeyStore) Delete(ctx context.Context, hash string) (store.APIKey, error) {
	var rec apiKeyRecord
	err := update(ctx, s.db, "delete api key", func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketAPIKeys))
		var err error
		rec, err = loadKey(b, hash)
		if err != nil {
			return err
		}
		return b.Delete([]byte(hash))
	})
	if err != nil {
		return store.APIKey{}, err
	}
	return rec.key(), nil
}

// loadKey reads the record of the key with hash; none is store.ErrNotFound.
func loadKey(b *bolt.Bucket, hash string) (apiKeyRecord, error) {
	return getExisting[apiKeyRecord](b, []byte(hash))
}
