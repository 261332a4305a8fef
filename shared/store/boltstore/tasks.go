package boltstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/toolshed/toolshed/shared/store"
)

var _ store.Tasks = (*taskStore)(nil)

type taskStore struct {
	db *bolt.DB
}

// taskRecord is a task as stored.
type taskRecord struct {
	ID          int64      `json:"id"`
	Title       string     `json:"title"`
	Description *string    `json:"description,omitempty"`
	Status      string     `json:"status"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`
}

func (r taskRecord) task() store.Task {
	return store.Task{
		ID:          r.ID,
		Title:       r.Title,
		Description: r.Description,
		Status:      store.TaskStatus(r.Status),
		CreatedAt:   r.CreatedAt,
		UpdatedAt:   r.UpdatedAt,
		CompletedAt: r.CompletedAt,
	}
}

// taskKey is the big-endian id, so key order is id order.
func taskKey(id int64) []byte {
	k := make([]byte, 8)
	binary.BigEndian.PutUint64(k, uint64(id))
	return k
}

func (s *taskStore) Create(ctx context.Context, tenant string, t store.NewTask, now time.Time) (store.Task, error) {
	now = now.UTC()
	var rec taskRecord
	var replayed bool
	err := update(ctx, s.db, "create task", func(tx *bolt.Tx) error {
		replayed = false
		idem, first, err := firstWrite[int64](tx, t.IdempotencyKey, tenant, idemTask)
		if err != nil {
			return err
		}
		if first != nil {
			replayed = true
			rec, err = replayTask(nested(tx, bucketTasks, tenant), *first)
			return err
		}
		b, err := nestedCreate(tx, bucketTasks, tenant)
		if err != nil {
			return err
		}
		seq, err := b.NextSequence()
		if err != nil {
			return fmt.Errorf("next task id: %w", err)
		}
		rec = taskRecord{
			ID:          int64(seq),
			Title:       t.Title,
			Description: copyString(t.Description),
			Status:      string(store.TaskPending),
			CreatedAt:   now,
			UpdatedAt:   now,
		}
		key := taskKey(rec.ID)
		if b.Get(key) != nil {
			return fmt.Errorf("task %d: %w", rec.ID, store.ErrConflict)
		}
		if err := putJSON(b, key, rec); err != nil {
			return err
		}
		return recordFirst(idem, t.IdempotencyKey, rec.ID)
	})
	if err != nil {
		return store.Task{}, err
	}
	task := rec.task()
	task.Replayed = replayed
	return task, nil
}

// replayTask loads the task an earlier Create with the same idempotency
// key made.
func replayTask(b *bolt.Bucket, id int64) (taskRecord, error) {
	rec, err := loadTask(b, id)
	if errors.Is(err, store.ErrNotFound) {
		return rec, fmt.Errorf("the task created with this idempotency key (id %d) was deleted: %w", id, store.ErrNotFound)
	}
	return rec, err
}

func (s *taskStore) Get(ctx context.Context, tenant string, id int64) (store.Task, error) {
	var rec taskRecord
	err := view(ctx, s.db, fmt.Sprintf("get task %d", id), func(tx *bolt.Tx) error {
		var err error
		rec, err = loadTask(nested(tx, bucketTasks, tenant), id)
		return err
	})
	if err != nil {
		return store.Task{}, err
	}
	return rec.task(), nil
}

func (s *taskStore) List(ctx context.Context, tenant string, q store.TaskQuery) (store.TaskPage, error) {
	limit := store.PageLimit(q.Limit)
	after := max(q.After, 0)
	page := store.TaskPage{Tasks: []store.Task{}}
	err := view(ctx, s.db, "list tasks", func(tx *bolt.Tx) error {
		b := nested(tx, bucketTasks, tenant)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Seek(taskKey(after + 1)); k != nil; k, v = c.Next() {
			if v == nil { // a nested bucket; there are none, but be safe
				continue
			}
			var rec taskRecord
			if _, err := getJSON(b, k, &rec); err != nil {
				return err
			}
			if q.Status != "" && rec.Status != string(q.Status) {
				continue
			}
			if len(page.Tasks) == limit { // one more match exists
				page.Next = page.Tasks[limit-1].ID
				return nil
			}
			page.Tasks = append(page.Tasks, rec.task())
		}
		return nil
	})
	if err != nil {
		return store.TaskPage{}, err
	}
	return page, nil
}

func (s *taskStore) Update(ctx context.Context, tenant string, id int64, p store.TaskPatch, now time.Time) (store.Task, error) {
	return s.modify(ctx, fmt.Sprintf("update task %d", id), tenant, id, func(rec *taskRecord) {
		if p.Title != nil {
			rec.Title = *p.Title
		}
		if p.SetDescription {
			rec.Description = copyString(p.Description)
		}
		rec.UpdatedAt = now.UTC()
	})
}

func (s *taskStore) Complete(ctx context.Context, tenant string, id int64, now time.Time) (store.Task, error) {
	return s.modify(ctx, fmt.Sprintf("complete task %d", id), tenant, id, func(rec *taskRecord) {
		now = now.UTC()
		rec.Status = string(store.TaskCompleted)
		rec.UpdatedAt = now
		if rec.CompletedAt == nil {
			rec.CompletedAt = &now
		}
	})
}

// modify loads an existing task, applies change and stores it.
func (s *taskStore) modify(ctx context.Context, op, tenant string, id int64, change func(*taskRecord)) (store.Task, error) {
	var rec taskRecord
	err := update(ctx, s.db, op, func(tx *bolt.Tx) error {
		b := nested(tx, bucketTasks, tenant)
		var err error
		rec, err = loadTask(b, id)
		if err != nil {
			return err
		}
		change(&rec)
		return putJSON(b, taskKey(id), rec)
	})
	if err != nil {
		return store.Task{}, err
	}
	return rec.task(), nil
}

func (s *taskStore) Delete(ctx context.Context, tenant string, id int64) (store.Task, error) {
	var rec taskRecord
	err := update(ctx, s.db, fmt.Sprintf("delete task %d", id), func(tx *bolt.Tx) error {
		b := nested(tx, bucketTasks, tenant)
		var err error
		rec, err = loadTask(b, id)
		if err != nil {
			return err
		}
		return b.Delete(taskKey(id))
	})
	if err != nil {
		return store.Task{}, err
	}
	return rec.task(), nil
}

// loadTask reads task id from a tenant's bucket (which may be nil).
func loadTask(b *bolt.Bucket, id int64) (taskRecord, error) {
	if id <= 0 {
		return taskRecord{}, store.ErrNotFound
	}
	return getExisting[taskRecord](b, taskKey(id))
}

func copyString(s *string) *string {
	if s == nil {
		return nil
	}
	v := *s
	return &v
}
