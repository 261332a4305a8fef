// Package storetest is the conformance suite of package store: every
// implementation runs it from its own tests with
//
//	storetest.Run(t, func(t *testing.T) store.Stores { ... fresh, empty stores ... })
//
// Each subtest asks for fresh stores and drives time explicitly (no wall
// clock), so the results are exact.
package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/store"
)

// A check is one named case of the suite. It gets fresh, empty stores of
// its own.
type check struct {
	name string
	run  func(t *testing.T, st store.Stores)
}

// A group is a named table of checks, run as one subtest, with groups of
// its own run after its checks.
type group struct {
	name   string
	checks []check
	groups []group
}

// suite is the whole conformance suite, one group per store.
var suite = []group{
	{name: "Tasks", checks: taskChecks, groups: []group{{name: "IdempotencyKey", checks: taskIdempotencyChecks}}},
	{name: "Memory", checks: memoryChecks, groups: []group{{name: "IdempotencyKey", checks: memoryIdempotencyChecks}}},
	{name: "Counters", checks: counterChecks},
	{name: "Access", checks: accessChecks},
	{name: "APIKeys", checks: apiKeyChecks},
}

// Run runs the whole suite. newStores must return empty stores, isolated
// from those of other calls.
func Run(t *testing.T, newStores func(t *testing.T) store.Stores) {
	for _, g := range suite {
		runGroup(t, g, newStores)
	}
}

// runGroup runs g as a subtest of t: each check in a subtest of its own
// with fresh stores, then g's groups.
func runGroup(t *testing.T, g group, newStores func(t *testing.T) store.Stores) {
	t.Run(g.name, func(t *testing.T) {
		for _, c := range g.checks {
			t.Run(c.name, func(t *testing.T) { c.run(t, newStores(t)) })
		}
		for _, sub := range g.groups {
			runGroup(t, sub, newStores)
		}
	})
}

// clock hands out strictly increasing times with sub-microsecond parts in a
// non-UTC zone, to check that stores keep full precision and any zone.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock {
	zone := time.FixedZone("UTC+2", 2*60*60)
	return &clock{now: time.Date(2025, 3, 4, 5, 6, 7, 123456789, zone)}
}

// next advances the clock by a second and a nanosecond and returns it.
func (c *clock) next() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Second + time.Nanosecond)
	return c.now
}

func ptr[T any](v T) *T { return &v }

// atOnce calls write(0), …, write(n-1) concurrently and returns their
// results and errors in that order.
func atOnce[T any](n int, write func(i int) (T, error)) ([]T, []error) {
	got := make([]T, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i], errs[i] = write(i) })
	}
	wg.Wait()
	return got, errs
}

// wantErr fails unless err wraps target.
func wantErr(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error = %v, want %v", what, err, target)
	}
}

// noErr fails on any error.
func noErr(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func equalTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

func equalString(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func formatTask(t store.Task) string {
	desc, completed := "<nil>", "<nil>"
	if t.Description != nil {
		desc = fmt.Sprintf("%q", *t.Description)
	}
	if t.CompletedAt != nil {
		completed = t.CompletedAt.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("{ID:%d Title:%q Description:%s Status:%s CreatedAt:%s UpdatedAt:%s CompletedAt:%s}",
		t.ID, t.Title, desc, t.Status,
		t.CreatedAt.UTC().Format(time.RFC3339Nano), t.UpdatedAt.UTC().Format(time.RFC3339Nano), completed)
}

// sameTask fails unless got and want are the same task (times compared as
// instants).
func sameTask(t *testing.T, got, want store.Task, what string) {
	t.Helper()
	if got.ID != want.ID || got.Title != want.Title || !equalString(got.Description, want.Description) ||
		got.Status != want.Status || !got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) ||
		!equalTime(got.CompletedAt, want.CompletedAt) {
		t.Fatalf("%s:\n got %s\nwant %s", what, formatTask(got), formatTask(want))
	}
}

func taskIDs(tasks []store.Task) []int64 {
	ids := make([]int64, 0, len(tasks))
	for _, task := range tasks {
		ids = append(ids, task.ID)
	}
	return ids
}

// seq returns from, from+1, …, to.
func seq(from, to int64) []int64 {
	var ids []int64
	for id := from; id <= to; id++ {
		ids = append(ids, id)
	}
	return ids
}
