package boltstore

import (
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/toolshed/toolshed/shared/store"
)

var _ store.Counters = (*counterStore)(nil)

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
