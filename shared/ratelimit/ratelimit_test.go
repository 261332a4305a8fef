package ratelimit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/ratelimit"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/testenv/dynamotest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/tools/hello"
)

func backends(t *testing.T) map[string]func(t *testing.T) store.Counters {
	return map[string]func(t *testing.T) store.Counters{
		"memory": func(t *testing.T) store.Counters { return ratelimit.NewMemoryCounters(nil) },
		"bolt": func(t *testing.T) store.Counters {
			db, err := boltstore.Open(filepath.Join(t.TempDir(), "r.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db.Stores().Counters
		},
		"dynamodb": func(t *testing.T) store.Counters {
			return dynamotest.Start(t).Stores(t).Counters
		},
	}
}

// TestExactUnderConcurrency: 1,000 parallel calls against 60/min → exactly
// 60 succeed and every other one is RATE_LIMITED with retryAfter.
func TestExactUnderConcurrency(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			set, err := schema.Load(contracts.FS)
			if err != nil {
				t.Fatal(err)
			}
			// A fixed clock in the middle of a window: no window boundary
			// can split the burst.
			now := func() time.Time { return time.Date(2026, 11, 21, 12, 0, 30, 0, time.UTC) }
			p, err := toolkit.NewPipeline(set, []toolkit.Tool{hello.New()}, toolkit.Options{
				Limiter:        ratelimit.New(open(t), now),
				LimitOverrides: map[string]int{"hello": 60},
				Now:            now,
			})
			if err != nil {
				t.Fatal(err)
			}
			var (
				wg          sync.WaitGroup
				mu          sync.Mutex
				ok, limited int
				other       []toolkit.Outcome
				// 16 at a time: enough to race on one counter, few enough
				// that dynalite on a busy machine answers each within the
				// calls' stall bound (at 64, it sometimes did not).
				sem            = make(chan struct{}, 16)
				args           = json.RawMessage(`{"name":"x"}`)
				badRetryAfters int
			)
			for i := 0; i < 400; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sem <- struct{}{}
					defer func() { <-sem }()
					out := p.Invoke(context.Background(), toolkit.Request{Tool: "hello", Tenant: "acme", Args: args})
					mu.Lock()
					defer mu.Unlock()
					switch {
					case out.OK:
						ok++
					case out.Error.Code == toolerr.RateLimited:
						limited++
						if out.Error.RetryAfter != 30 {
							badRetryAfters++
						}
					default:
						other = append(other, out)
					}
				}()
			}
			wg.Wait()
			if ok != 60 || limited != 340 || len(other) > 0 {
				t.Fatalf("ok=%d limited=%d other=%v", ok, limited, other)
			}
			if badRetryAfters > 0 {
				t.Errorf("%d RATE_LIMITED outcomes without retryAfter=30", badRetryAfters)
			}
			// Another tenant and the next window are not affected.
			if out := p.Invoke(context.Background(), toolkit.Request{Tool: "hello", Tenant: "other", Args: args}); !out.OK {
				t.Errorf("other tenant limited: %+v", out.Error)
			}
		})
	}
}

func TestWindowsAndRetryAfter(t *testing.T) {
	db, err := boltstore.Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	clock := time.Date(2026, 11, 21, 12, 0, 59, 500_000_000, time.UTC)
	l := ratelimit.New(db.Stores().Counters, func() time.Time { return clock })
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if d, err := l.Allow(ctx, "t", "hello", 2); err != nil || !d.Allowed {
			t.Fatalf("call %d: %+v %v", i, d, err)
		}
	}
	d, _ := l.Allow(ctx, "t", "hello", 2)
	if d.Allowed || d.RetryAfter != 500*time.Millisecond {
		t.Errorf("third call: %+v", d)
	}
	clock = clock.Add(time.Second) // next window
	if d, _ := l.Allow(ctx, "t", "hello", 2); !d.Allowed {
		t.Error("new window still limited")
	}
}

// TestMemoryCountersForgetOldWindows: expired counters are dropped, so a
// long-running local server keeps only the active windows.
func TestMemoryCountersForgetOldWindows(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	c := ratelimit.NewMemoryCounters(func() time.Time { return now })
	ctx := context.Background()
	for i := range 100 {
		if _, ok, _ := c.Increment(ctx, fmt.Sprintf("tenant-%d#hello#0", i), 5, now.Add(time.Minute)); !ok {
			t.Fatal("first call refused")
		}
	}
	if c.Len() != 100 {
		t.Fatalf("%d counters, want 100", c.Len())
	}
	now = now.Add(2 * time.Minute)
	if n, ok, _ := c.Increment(ctx, "tenant-0#hello#120", 5, now.Add(time.Minute)); !ok || n != 1 {
		t.Fatalf("new window: %d %v", n, ok)
	}
	if c.Len() != 1 {
		t.Errorf("%d counters after the windows ended, want 1", c.Len())
	}
}
