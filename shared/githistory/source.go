package githistory

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// Histories opens the history of the repository a view shows, or fails
// with ErrNoHistory. The wiring chooses which one a process has.
type Histories interface {
	Open(ctx context.Context, view repo.View) (*Repo, error)
}

// Local opens the history of local views: each directory's own .git.
type Local struct {
	mu    sync.Mutex
	repos map[string]*Repo
}

// Open returns the repository of the view's directory.
func (l *Local) Open(ctx context.Context, view repo.View) (*Repo, error) {
	d, ok := view.(interface{ Dir() string })
	if !ok {
		return nil, ErrNoHistory
	}
	l.mu.Lock()
	r := l.repos[d.Dir()]
	l.mu.Unlock()
	if r != nil {
		return r, nil
	}
	r, err := Open(ctx, d.Dir())
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.repos == nil {
		l.repos = map[string]*Repo{}
	}
	l.repos[d.Dir()] = r
	return r, nil
}

// NoHistory is the RESOURCE_NOT_FOUND of a repository whose history
// cannot be read, or err itself when it is another failure.
func NoHistory(name string, err error) error {
	if !errors.Is(err, ErrNoHistory) {
		return fmt.Errorf("open the history of %s: %w", name, err)
	}
	return toolerr.New(toolerr.ResourceNotFound,
		"Repository %q has no git history here: it is not the top folder of a git repository, or its snapshot was pushed without its history", name).
		With("repo", name)
}

// policed is what a view says of paths and contents that are not its own
// (repo's views have it): the history tools apply the view's rules to
// every path and content of the history.
type policed interface {
	Policy() *repo.Policy
	CheckContent(name string, data []byte) error
}

// Rules returns the path and content checks of view. A view without them
// refuses everything: nothing of the history is shown by mistake.
func Rules(view repo.View) (checkPath func(string) error, checkContent func(string, []byte) error) {
	p, ok := view.(policed)
	if !ok {
		refuse := toolerr.New(toolerr.PathNotAllowed, "this repository's view has no path policy")
		return func(string) error { return refuse }, func(string, []byte) error { return refuse }
	}
	return p.Policy().Check, p.CheckContent
}
