// Package ratelimit enforces per-tenant, per-tool limits in fixed one-minute
// windows on top of store.Counters (DynamoDB conditional ADD or the embedded
// store), so the limit is exact under concurrency and shared by every
// function instance. It implements toolkit.Limiter.
package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// Window is the length of one rate window.
const Window = time.Minute

// Limiter counts calls per tenant, tool and window.
type Limiter struct {
	counters store.Counters
	now      func() time.Time
}

var _ toolkit.Limiter = (*Limiter)(nil)

// New returns a limiter over counters; now may be nil for the real clock.
func New(counters store.Counters, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{counters: counters, now: now}
}

// Allow implements toolkit.Limiter.
func (l *Limiter) Allow(ctx context.Context, tenant, tool string, perMinute int) (toolkit.Decision, error) {
	now := l.now()
	start := now.Truncate(Window)
	end := start.Add(Window)
	key := fmt.Sprintf("%s#%s#%d", tenant, tool, start.Unix())
	// Keep the counter a window longer than needed; TTL is only clean-up.
	_, allowed, err := l.counters.Increment(ctx, key, perMinute, end.Add(Window))
	if err != nil {
		return toolkit.Decision{}, fmt.Errorf("count %s: %w", key, err)
	}
	if allowed {
		return toolkit.Decision{Allowed: true}, nil
	}
	return toolkit.Decision{RetryAfter: end.Sub(now)}, nil
}
