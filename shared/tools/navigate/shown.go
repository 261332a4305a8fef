package navigate

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/toolshed/toolshed/shared/repo"
)

// shown is what one call shows of a repository's files: each read by its
// path (repo.PathReader: the view's rules for that path alone), or taken
// from the view's searchable list once an answer searches them all. A
// precise answer shows a few files, and the list of a large snapshot
// decompresses every file first: seconds for the Go tree, a cold
// deployed call's whole deadline.
type shown struct {
	view   repo.View
	mu     sync.Mutex
	paths  *repo.PathReader
	byPath map[string]*repo.File
	all    []*repo.File // in walk order; nil until an answer lists them
}

func newShown(view repo.View) *shown {
	return &shown{view: view, paths: repo.NewPathReader(view), byPath: map[string]*repo.File{}}
}

// file returns the searchable file at p, or nil when the view does not
// show it (or it cannot be read: the answer leaves it out, and the log
// says why).
func (s *shown) file(p string) *repo.File {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.all != nil {
		return fileIn(s.all, p)
	}
	if f, ok := s.byPath[p]; ok {
		return f
	}
	f, err := s.paths.File(p)
	if err != nil {
		slog.Warn("navigate: a file of the answer could not be read; left out", "path", p, "error", err)
	}
	s.byPath[p] = f
	return f
}

// list returns every searchable file, in walk order.
func (s *shown) list(ctx context.Context) ([]*repo.File, error) {
	s.mu.Lock()
	all := s.all
	s.mu.Unlock()
	if all != nil {
		return all, nil
	}
	files, err := s.view.Searchable(ctx)
	if err != nil {
		return nil, fmt.Errorf("list searchable files: %w", err)
	}
	s.mu.Lock()
	s.all = files
	s.mu.Unlock()
	return files, nil
}
