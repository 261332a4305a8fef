package history

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/reposcope"
)

// blameCacheBytes bounds the blames kept in memory, by an estimate of
// their size.
const blameCacheBytes = 32 << 20

// blameHunkBytes estimates one kept hunk: its strings and fields.
const blameHunkBytes = 256

// BlameStore is the second level of the blame cache, which outlives the
// process: deployed, the history tools run in many instances of one
// function, each started cold, and an unchanged file is still never
// blamed twice. The wiring supplies it (wiring.BlameObjects: the bucket);
// the local server keeps blames in memory only. Load answers false for a
// blame not stored; what it answers is checked before it is used.
type BlameStore interface {
	Load(ctx context.Context, repo reposcope.Ref, name string) ([]byte, bool, error)
	Save(ctx context.Context, repo reposcope.Ref, name string, data []byte) error
}

// blameKey says which blame a complete one is, so that one kept answers
// only the same question. It is the path, the commit that last changed
// the path as seen from the commit blamed (git rev-list -1 REV -- PATH),
// and the lines. Not the blob: a blob at a path reached again (A, then B,
// then A again) has another blame the second time, its lines last changed
// by the commit that brought A back. Blame attributes from that commit
// down: the commits after it leave the path as it is, so every commit
// that sees the same last change has the same blame of the path.
type blameKey struct {
	Path       string `json:"path"`
	Changed    string `json:"changed"`
	Start, End int
}

// name is the key as a name for the store: a hash of its parts.
func (k blameKey) name() string {
	raw, _ := json.Marshal(k)
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// storedBlame is a blame as the store keeps it: with its key, checked on
// the way back.
type storedBlame struct {
	Key   blameKey         `json:"key"`
	Blame githistory.Blame `json:"blame"`
}

// blames keeps complete blames: in memory, the most recently used first,
// and in the store when there is one.
type blames struct {
	store BlameStore // nil: memory only

	mu      sync.Mutex
	max     int
	size    int
	order   *list.List // of *blameEntry
	entries map[blameKey]*list.Element
}

type blameEntry struct {
	key   blameKey
	blame githistory.Blame
	size  int
}

func newBlames(maxBytes int, store BlameStore) *blames {
	return &blames{store: store, max: maxBytes, order: list.New(), entries: map[blameKey]*list.Element{}}
}

// get returns the blame of key, of a file of n lines, from memory or from
// the store. A stored blame that does not answer key (another key, a
// broken object, hunks that do not cover the lines) is not one: a miss.
func (c *blames) get(ctx context.Context, repo reposcope.Ref, key blameKey, n int) (githistory.Blame, bool) {
	c.mu.Lock()
	e, ok := c.entries[key]
	if ok {
		c.order.MoveToFront(e)
		b := e.Value.(*blameEntry).blame
		c.mu.Unlock()
		return b, true
	}
	c.mu.Unlock()
	if c.store == nil {
		return githistory.Blame{}, false
	}
	data, found, err := c.store.Load(ctx, repo, key.name())
	if err != nil {
		slog.WarnContext(ctx, "blame cache: reading a stored blame failed", "repo", repo.Key(), "path", key.Path, "error", err)
	}
	var s storedBlame
	if !found || err != nil || json.Unmarshal(data, &s) != nil || s.Key != key || !covers(s.Blame, key, n) {
		return githistory.Blame{}, false
	}
	c.keep(key, s.Blame)
	return s.Blame, true
}

// covers reports whether b is a complete blame of the lines key names in
// a file of n lines: hunks in order, one after the other, from the first
// line to the last, each of a commit.
func covers(b githistory.Blame, key blameKey, n int) bool {
	next, last := max(key.Start, 1), n
	if key.End > 0 {
		last = min(key.End, n)
	}
	for _, h := range b.Hunks {
		if h.Line != next || h.Lines < 1 || len(h.Commit) < 40 || h.Uncommitted() {
			return false
		}
		next += h.Lines
	}
	return b.Complete && next == last+1
}

// put keeps a complete blame, in memory and in the store.
func (c *blames) put(ctx context.Context, repo reposcope.Ref, key blameKey, b githistory.Blame) {
	c.keep(key, b)
	if c.store == nil {
		return
	}
	data, err := json.Marshal(storedBlame{Key: key, Blame: b})
	if err == nil {
		err = c.store.Save(ctx, repo, key.name(), data)
	}
	if err != nil {
		slog.WarnContext(ctx, "blame cache: storing a blame failed", "repo", repo.Key(), "path", key.Path, "error", err)
	}
}

// keep keeps a blame in memory, within the budget.
func (c *blames) keep(key blameKey, b githistory.Blame) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; ok {
		return
	}
	e := &blameEntry{key: key, blame: b, size: len(key.Path) + len(key.Changed) + len(b.Hunks)*blameHunkBytes}
	c.entries[key] = c.order.PushFront(e)
	c.size += e.size
	for c.size > c.max && c.order.Len() > 1 {
		last := c.order.Back()
		old := last.Value.(*blameEntry)
		c.order.Remove(last)
		delete(c.entries, old.key)
		c.size -= old.size
	}
}
