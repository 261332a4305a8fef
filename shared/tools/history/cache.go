package history

import (
	"container/list"
	"sync"

	"github.com/toolshed/toolshed/shared/githistory"
)

// blameCacheBytes bounds the blames kept, by an estimate of their size.
const blameCacheBytes = 32 << 20

// blameHunkBytes estimates one kept hunk: its strings and fields.
const blameHunkBytes = 256

// blameCache keeps complete blames by key (path, blob, lines), the most
// recently used first, so that an unchanged file is never blamed twice.
type blameCache struct {
	mu      sync.Mutex
	max     int
	size    int
	order   *list.List // of *blameEntry
	entries map[string]*list.Element
}

type blameEntry struct {
	key   string
	blame githistory.Blame
	size  int
}

func newBlameCache(maxBytes int) *blameCache {
	return &blameCache{max: maxBytes, order: list.New(), entries: map[string]*list.Element{}}
}

func (c *blameCache) get(key string) (githistory.Blame, bool) {
	if key == "" {
		return githistory.Blame{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return githistory.Blame{}, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*blameEntry).blame, true
}

func (c *blameCache) put(key string, b githistory.Blame) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; ok {
		return
	}
	e := &blameEntry{key: key, blame: b, size: len(key) + len(b.Hunks)*blameHunkBytes}
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
