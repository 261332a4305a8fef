package ratelimit

import (
	"context"
	"sync"
	"time"

	"github.com/toolshed/toolshed/shared/store"
)

// MemoryCounters counts in the process's memory: exact under concurrency
// within one process, gone when it stops. The local server uses them,
// because one process owns its store and rate counters are disposable (a
// lost window only resets a limit), which saves a durable write per call.
// Deployed functions share their counters in DynamoDB instead.
type MemoryCounters struct {
	mu      sync.Mutex
	counts  map[string]memoryCount
	now     func() time.Time
	sweepAt time.Time
}

type memoryCount struct {
	n       int
	expires time.Time
}

var _ store.Counters = (*MemoryCounters)(nil)

// NewMemoryCounters returns empty counters; now may be nil for the real
// clock.
func NewMemoryCounters(now func() time.Time) *MemoryCounters {
	if now == nil {
		now = time.Now
	}
	return &MemoryCounters{counts: map[string]memoryCount{}, now: now}
}

// Increment implements store.Counters.
func (m *MemoryCounters) Increment(_ context.Context, key string, limit int, expires time.Time) (int, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep()
	if limit <= 0 {
		return 0, false, nil
	}
	c := m.counts[key]
	if c.n >= limit {
		return limit, false, nil
	}
	c.n++
	c.expires = expires
	m.counts[key] = c
	return c.n, true, nil
}

// sweep drops expired counters, at most once a minute, so memory stays
// proportional to the tenants and tools active in the last window.
func (m *MemoryCounters) sweep() {
	now := m.now()
	if now.Before(m.sweepAt) {
		return
	}
	for k, c := range m.counts {
		if !now.Before(c.expires) {
			delete(m.counts, k)
		}
	}
	m.sweepAt = now.Add(Window)
}

// Len returns how many counters are kept (for tests and diagnostics).
func (m *MemoryCounters) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.counts)
}
