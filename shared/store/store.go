// Package store defines Toolshed's persistent state: the types it keeps and
// small interfaces over them, one per kind of data.
//
// The model:
//
//   - Tasks: a per-tenant list of to-do items. Ids are issued by an atomic
//     per-tenant counter (1, 2, 3, …) so ascending id is creation order. Ids
//     are never reused, even after a delete; a failed Create may burn an id.
//   - Memory: append-only notes per tenant and file. Entries are never
//     updated or deleted; each has a unique time-ordered id.
//
// Creating a task and appending a memory entry are the two writes that are
// not idempotent by nature (each call makes a new item), so both take an
// optional idempotency key chosen by the client: a second write with a key
// the tenant already used (for tasks; for memory, in the same file) makes
// nothing and returns what the first one made, marked Replayed. A caller
// whose write ended without an answer (ErrMaybeDone, a deadline) can so
// retry it safely. Keys of different tenants never meet.
//   - Counters: fixed-window rate counters. The caller names the window in
//     the key; the expiry is for clean-up only.
//   - Access: how often and when a tenant last read a path.
//   - APIKeys: keys by their sha256 hash, with tenant, name, the
//     repositories they are limited to, and revocation.
//
// Every tenant-owned item is keyed by its tenant, so one tenant can never
// see or change another's data. Stores do not validate tenant names, titles
// or paths: callers do.
//
// Two implementations pass the same conformance suite (package storetest):
// boltstore (an embedded file, for local runs) and dynamostore (DynamoDB).
// Errors are one of the sentinels below, wrapped with context; any backend
// failure wraps ErrStorage.
package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Sentinel errors. Implementations wrap them with context; test with errors.Is.
var (
	// ErrNotFound means the item does not exist (for this tenant).
	ErrNotFound = errors.New("not found")
	// ErrConflict means the write collides with an existing item, e.g. a key
	// that already exists, or with a write in progress (InProgressError).
	ErrConflict = errors.New("conflict")
	// ErrStorage means the backend failed. The wrapped text keeps the cause
	// for logs; callers should not show it to clients. Unless ErrMaybeDone
	// is wrapped too, nothing was changed.
	ErrStorage = errors.New("storage unavailable")
	// ErrMaybeDone, beside ErrStorage, means a write was sent and no answer
	// came: it may or may not have been applied.
	ErrMaybeDone = errors.New("the change may or may not have been made")
	// ErrThrottled, beside ErrStorage, means the backend refused the call
	// to slow callers down: trying again a little later should succeed.
	ErrThrottled = errors.New("storage is throttling requests")
)

// Limits for list queries.
const (
	// DefaultLimit is the page size used when a query's Limit is 0.
	DefaultLimit = 100
	// MaxLimit is the largest page size a store returns; larger limits are
	// clamped to it.
	MaxLimit = 1000
)

// PageLimit turns a query's Limit into the page size a store uses:
// DefaultLimit for 0 (or less), at most MaxLimit.
func PageLimit(limit int) int {
	switch {
	case limit <= 0:
		return DefaultLimit
	case limit > MaxLimit:
		return MaxLimit
	default:
		return limit
	}
}

// TaskStatus is the state of a task.
type TaskStatus string

// Task statuses.
const (
	TaskPending   TaskStatus = "pending"
	TaskCompleted TaskStatus = "completed"
)

// Task is one to-do item of a tenant.
type Task struct {
	ID          int64
	Title       string
	Description *string // nil when there is none
	Status      TaskStatus
	CreatedAt   time.Time
	UpdatedAt   time.Time
	CompletedAt *time.Time // set the first time the task is completed
	// Replayed is set only by Create, on a task an earlier Create with the
	// same idempotency key made (returned as it is now): this call made
	// nothing.
	Replayed bool
}

// NewTask is what Create needs; the store sets the rest.
type NewTask struct {
	Title       string
	Description *string
	// IdempotencyKey, when not empty, makes Create idempotent for the
	// tenant: see Tasks.Create. Callers check its form (the tools allow
	// 1-128 letters, digits and "._:-").
	IdempotencyKey string
}

// InProgressError is the error of a write whose idempotency key is held by
// another request that has not finished, or ended without recording what
// it did, less than a takeover delay ago (DynamoDB only: see package
// dynamostore). This call changed nothing; the same write with the same
// key can be tried again after RetryAfter. It wraps ErrConflict.
type InProgressError struct {
	RetryAfter time.Duration
}

func (e *InProgressError) Error() string {
	return fmt.Sprintf("a request with this idempotency key is in progress; try again in %s: %v",
		e.RetryAfter.Round(time.Second), ErrConflict)
}

// Unwrap makes errors.Is(err, ErrConflict) true.
func (e *InProgressError) Unwrap() error { return ErrConflict }

// TaskPatch changes a task. Nil fields are left alone. With SetDescription,
// Description replaces the description, and a nil Description clears it.
type TaskPatch struct {
	Title          *string
	SetDescription bool
	Description    *string
}

// TaskQuery selects a page of tasks.
type TaskQuery struct {
	Status TaskStatus // "" for all
	Limit  int        // page size; 0 for DefaultLimit, clamped to MaxLimit
	After  int64      // return ids greater than After (the previous page's Next)
}

// TaskPage is one page of tasks in ascending id order.
type TaskPage struct {
	Tasks []Task
	Next  int64 // cursor for the next page; 0 when there are no more tasks
}

// Tasks stores each tenant's tasks.
type Tasks interface {
	// Create stores a pending task under the next id of the tenant's
	// counter: 1, 2, 3…
	//
	// With an IdempotencyKey the tenant used before, Create makes nothing
	// and returns the task that first Create made, as it is now, with
	// Replayed set; if that task was deleted since, an error wrapping
	// ErrNotFound says so. A key is kept for as long as the store is, and
	// concurrent Creates with one key make one task at most (the others
	// replay it or fail with an InProgressError).
	Create(ctx context.Context, tenant string, t NewTask, now time.Time) (Task, error)
	// Get returns one task, or ErrNotFound.
	Get(ctx context.Context, tenant string, id int64) (Task, error)
	// List returns tasks in ascending id (creation) order, filtered by status
	// and paged by Limit and After.
	List(ctx context.Context, tenant string, q TaskQuery) (TaskPage, error)
	// Update applies a patch and sets UpdatedAt. It returns ErrNotFound for a
	// missing task and never creates one.
	Update(ctx context.Context, tenant string, id int64, p TaskPatch, now time.Time) (Task, error)
	// Complete marks a task completed. CompletedAt keeps its first value
	// when the task is completed again. ErrNotFound for a missing task.
	Complete(ctx context.Context, tenant string, id int64, now time.Time) (Task, error)
	// Delete removes a task and returns it, or ErrNotFound.
	Delete(ctx context.Context, tenant string, id int64) (Task, error)
}

// MemoryEntry is one appended note of a tenant's memory file.
type MemoryEntry struct {
	Tenant    string
	File      string
	ID        string // unique; lexical order is time order (see NewMemoryID)
	Content   string
	CreatedAt time.Time
	// Replayed is set only by Append, on the entry an earlier Append with
	// the same idempotency key made: this call appended nothing.
	Replayed bool
}

// NewEntry is what Append needs: the content and, optionally, an
// idempotency key (see Memory.Append; callers check its form).
type NewEntry struct {
	Content        string
	IdempotencyKey string
}

// MemoryQuery selects a page of memory entries.
type MemoryQuery struct {
	Limit int    // page size; 0 for DefaultLimit, clamped to MaxLimit
	After string // return entries with ID greater than After (the previous page's Next)
}

// MemoryPage is one page of memory entries in ascending ID order.
type MemoryPage struct {
	Entries []MemoryEntry
	Next    string // cursor for the next page; "" when there are no more entries
}

// Memory stores append-only memory files. There is deliberately no update
// or delete.
type Memory interface {
	// Append adds an entry with a new ID. The write is conditional, so an
	// existing entry is never overwritten (ErrConflict instead).
	//
	// With an IdempotencyKey the tenant used before on this file, Append
	// adds nothing and returns the entry that first Append made, with
	// Replayed set. Keys are per tenant and file; concurrent Appends with
	// one key add one entry at most (the others replay it or fail with an
	// InProgressError).
	Append(ctx context.Context, tenant, file string, e NewEntry, now time.Time) (MemoryEntry, error)
	// List returns a file's entries in ascending ID order.
	List(ctx context.Context, tenant, file string, q MemoryQuery) (MemoryPage, error)
}

// Counters are fixed-window rate counters.
type Counters interface {
	// Increment adds one to the counter named key if it is below limit. It
	// returns the count after the call and whether this call was allowed
	// (when it is not, count is limit). expires is when the window ends; it
	// is kept for clean-up only, and correctness does not depend on it: the
	// caller puts the window start in the key.
	Increment(ctx context.Context, key string, limit int, expires time.Time) (count int, allowed bool, err error)
}

// AccessStat counts a tenant's reads of one path.
type AccessStat struct {
	Tenant     string
	Path       string
	Count      int64
	LastAccess time.Time
}

// Access tracks reads per tenant and path.
type Access interface {
	// Record counts one read at the given time and returns the new stat.
	Record(ctx context.Context, tenant, path string, at time.Time) (AccessStat, error)
	// Get returns the stat, or ErrNotFound if the path was never recorded.
	Get(ctx context.Context, tenant, path string) (AccessStat, error)
}

// APIKey is a stored API key. The key itself is never stored, only its hash.
type APIKey struct {
	Hash      string // hex sha256 of the key (HashKey)
	Tenant    string
	Name      string
	CreatedAt time.Time
	Revoked   bool
	RevokedAt *time.Time // set the first time the key is revoked
	// Repos limits the key to some of its tenant's repositories (sorted,
	// no repeats); nil: every one.
	Repos []string
}

// APIKeys stores API keys by hash.
type APIKeys interface {
	// Create stores a new key; ErrConflict if the hash exists.
	Create(ctx context.Context, k APIKey) error
	// Lookup returns the key with this hash, or ErrNotFound.
	Lookup(ctx context.Context, hash string) (APIKey, error)
	// List returns all keys sorted by CreatedAt, then Hash.
	List(ctx context.Context) ([]APIKey, error)
	// Revoke marks a key revoked and returns it; RevokedAt keeps its first
	// value when revoked again. ErrNotFound for a missing key.
	Revoke(ctx context.Context, hash string, at time.Time) (APIKey, error)
	// Delete removes a key and returns it, or ErrNotFound.
	Delete(ctx context.Context, hash string) (APIKey, error)
}

// Stores bundles one implementation of each interface.
type Stores struct {
	Tasks    Tasks
	Memory   Memory
	Counters Counters
	Access   Access
	APIKeys  APIKeys
}

// SortAPIKeys sorts keys by CreatedAt, then Hash: the order of APIKeys.List.
func SortAPIKeys(keys []APIKey) {
	slices.SortFunc(keys, func(a, b APIKey) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Hash, b.Hash)
	})
}

// HashKey returns the hex sha256 of an API key, the form stored in APIKey.Hash.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// NewMemoryEntry returns the entry both backends store for an append of
// content to tenant's file at now: a new id (NewMemoryID) and the time in UTC.
func NewMemoryEntry(tenant, file, content string, now time.Time) MemoryEntry {
	return MemoryEntry{Tenant: tenant, File: file, ID: NewMemoryID(now), Content: content, CreatedAt: now.UTC()}
}

// NewMemoryID returns a unique memory entry id for an entry made at now:
// 19 digits of Unix nanoseconds, a dash and 16 random hex digits, so lexical
// order is time order.
func NewMemoryID(now time.Time) string {
	return fmt.Sprintf("%019d-%016x", now.UnixNano(), rand.Uint64())
}

// memoryIDPattern is the shape of the ids NewMemoryID makes.
var memoryIDPattern = regexp.MustCompile(`^[0-9]{19}-[0-9a-f]{16}$`)

// ValidMemoryID reports whether s has the shape of the ids NewMemoryID
// makes (the indexer checks the ids the Memory table's stream delivers).
func ValidMemoryID(s string) bool { return memoryIDPattern.MatchString(s) }
