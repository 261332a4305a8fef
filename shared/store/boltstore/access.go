package boltstore

import (
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/toolshed/toolshed/shared/store"
)

var _ store.Access = (*accessStore)(nil)

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
