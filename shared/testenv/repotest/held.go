package repotest

import (
	"context"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
)

// Held serves a repository whose files are still being read (Searchable
// waits) until Release is closed: a large snapshot loading.
type Held struct {
	repo.Shared
	Release chan struct{}
}

// NewHeld returns src held until its Release is closed.
func NewHeld(src repo.Shared) *Held { return &Held{Shared: src, Release: make(chan struct{})} }

// Open implements repo.Source.
func (h *Held) Open(ctx context.Context, r reposcope.Ref) (repo.View, error) {
	v, err := h.Shared.Open(ctx, r)
	return heldView{View: v, release: h.Release}, err
}

type heldView struct {
	repo.View
	release chan struct{}
}

func (v heldView) Searchable(ctx context.Context) ([]*repo.File, error) {
	select {
	case <-v.release:
		return v.View.Searchable(ctx)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
