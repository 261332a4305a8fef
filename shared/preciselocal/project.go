package preciselocal

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/precise/fromscip"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/sciprun"
)

// When a Go project is indexed whole rather than by an overlay of the
// packages that changed (see the package comment): each overlay is one
// more store every query of a global symbol looks in, and a change of many
// packages costs about what the whole project does.
const (
	maxOverlays        = 8
	maxOverlayPackages = 32
)

// project is one project of the view, with its stores and what they were
// made of.
type project struct {
	sciprun.Project
	record
	status precise.Status
	reason string
	since  time.Time
	last   *Run // the last indexer run
	// failedOn is what the last run that failed was made from: nothing is
	// tried again until the files or the configuration differ from it.
	failedOn *inputs
}

// record is what the manifest keeps of a project.
type record struct {
	stores        []*store // oldest first: the whole project, then overlays
	moduleVersion string   // the version the Go stores' symbols carry
	inputs
}

// inputs are what an index is made from: the content hash of each file
// the project covers, and of its configuration file.
type inputs struct {
	files  map[string][32]byte
	config [32]byte
}

// projectKey names a project among the view's.
type projectKey struct {
	language sciprun.Language
	root     string
}

func keyOf(p sciprun.Project) projectKey { return projectKey{p.Language, p.Root} }

// set sets the status and reason, and when the status changed.
func (p *project) set(status precise.Status, reason string) {
	if status != p.status {
		p.since = time.Now()
	}
	p.status, p.reason = status, reason
}

// failed records a run that made no index, saying why in words that
// quote nothing of the repository (the log has the whole error). Stores
// made before keep answering.
func (p *project) failed(err error, in inputs, log *slog.Logger) {
	status, reason := verdict(err)
	log.Warn("precise: indexing failed", "root", p.Root, "language", p.Language, "error", err)
	p.failedOn = &in
	if p.last != nil {
		p.last.Error = reason
	}
	if p.stores != nil {
		p.reason = "the last re-index failed: " + reason
		return
	}
	p.set(status, reason)
}

// verdict says what a failed run makes of its project, and why.
func verdict(err error) (precise.Status, string) {
	var run *sciprun.RunError
	switch {
	case errors.As(err, &run) && errors.Is(run.Kind, sciprun.ErrUnavailable):
		return precise.Unavailable, run.Detail
	case errors.As(err, &run) && errors.Is(run.Kind, sciprun.ErrFailed):
		return precise.Failed, run.Detail // "exit status 2": the status says failed
	case errors.As(err, &run):
		return precise.Failed, run.Kind.Error() + ": " + run.Detail
	case errors.Is(err, fromscip.ErrNotSCIP):
		return precise.Failed, "the indexer wrote something that is not a SCIP index"
	case errors.Is(err, fromscip.ErrTooLarge):
		return precise.Failed, "the index is too large"
	}
	return precise.Failed, "the index could not be made (the server's log says why)"
}

// commit is the commit of the project's latest store ("" before one).
func (p *project) commit() string {
	if len(p.stores) == 0 {
		return ""
	}
	return p.stores[len(p.stores)-1].commit
}

// state is how far the project is, for answers.
func (p *project) state() precise.ProjectState {
	root := p.Root
	if root == "." {
		root = "" // the repository's root, as ProjectState names it
	}
	return precise.ProjectState{Root: root, Language: string(p.Language),
		Indexer: p.Indexer, Status: p.status, Reason: p.reason, Commit: p.commit(), Since: p.since}
}

// work is what a project's next run does.
type work struct {
	inputs
	full     bool
	packages []string // an overlay's Go packages, relative to the project
	why      string   // what changed
}

// plan says what brings p up to date with the view as it is now; a work
// without files does nothing.
func (f *follower) plan(ctx context.Context, p *project) work {
	_, files, ok := repo.LatestSearchable(ctx, f.view, f.log, "precise")
	if !ok {
		return work{}
	}
	in := inputs{files: covered(p.Project, files), config: f.configHash(p.Project)}
	if p.failedOn != nil && in.config == p.failedOn.config && maps.Equal(in.files, p.failedOn.files) {
		return work{} // it failed on these very files: wait for a change
	}
	return decide(p, in)
}

func (w work) none() bool { return w.files == nil }

// decide says what brings p from its stores' inputs to in.
func decide(p *project, in inputs) work {
	w := work{inputs: in, full: true}
	changed, removed := diff(p.files, in.files)
	switch {
	case p.stores == nil:
		w.why = fmt.Sprintf("%d files", len(in.files))
	case in.config != p.config:
		w.why = path.Join(p.Root, p.Config) + " changed"
	case len(changed) == 0 && !removed:
		return work{}
	case p.Language != sciprun.Go:
		w.why = fmt.Sprintf("%d files changed", len(changed))
	case removed:
		w.why = "a file was removed"
	case len(p.stores) > maxOverlays:
		w.why = fmt.Sprintf("compacting %d overlays", len(p.stores)-1)
	default:
		w.packages = packages(p.Root, changed)
		w.why = fmt.Sprintf("%d packages changed", len(w.packages))
		w.full = len(w.packages) > maxOverlayPackages
	}
	if w.full {
		w.packages = nil
	}
	return w
}

// diff returns the paths of now whose hash is not old's, sorted, and
// whether a path of old is gone.
func diff(old, now map[string][32]byte) (changed []string, removed bool) {
	for p, h := range now {
		if was, ok := old[p]; !ok || was != h {
			changed = append(changed, p)
		}
	}
	for p := range old {
		if _, ok := now[p]; !ok {
			removed = true
		}
	}
	slices.Sort(changed)
	return changed, removed
}

// packages returns the go list patterns of the folders of files, relative
// to the project's root: "./net/http", or "." for the root's own.
func packages(root string, files []string) []string {
	var out []string
	for _, f := range files {
		dir := path.Dir(f)
		if root != "." {
			dir = strings.TrimPrefix(strings.TrimPrefix(dir, root), "/")
		}
		pattern := "./" + dir
		if dir == "." || dir == "" {
			pattern = "."
		}
		out = append(out, pattern)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// covered returns the content hash of each of files p covers.
func covered(p sciprun.Project, files []*repo.File) map[string][32]byte {
	out := map[string][32]byte{}
	for _, f := range files {
		if p.Covers(f.Path) {
			out[f.Path] = f.Hash()
		}
	}
	return out
}

// configHash is the content hash of p's configuration file (zero for a
// project without one, or one that cannot be read).
func (f *follower) configHash(p sciprun.Project) [32]byte {
	if p.Config == "" {
		return [32]byte{}
	}
	data, err := fs.ReadFile(f.view, path.Join(p.Root, p.Config))
	if err != nil {
		return [32]byte{}
	}
	return sha256.Sum256(data)
}

// cover says which of projects covers a file, or why none does.
func cover(projects []sciprun.Project) func(string) (int, string) {
	return func(file string) (int, string) {
		p, err := sciprun.Cover(projects, file)
		if err != nil {
			return -1, strings.TrimPrefix(err.Error(), sciprun.ErrNotCovered.Error()+": ")
		}
		return slices.IndexFunc(projects, func(q sciprun.Project) bool { return keyOf(q) == keyOf(p) }), ""
	}
}

// reconcile makes found the view's projects: a project seen before keeps
// its stores, a new one takes those the manifest recorded for it (or is
// queued), and the stores of projects gone are let go.
func (f *follower) reconcile(found []sciprun.Project) {
	old := map[projectKey]*project{}
	for _, p := range f.projects {
		old[keyOf(p.Project)] = p
	}
	next := make([]*project, 0, len(found))
	for _, sp := range found {
		k := keyOf(sp)
		p := old[k]
		delete(old, k)
		if p == nil {
			p = &project{status: precise.Queued, since: time.Now()}
			if r := f.stored[k]; r != nil {
				p.record, p.status = *r, precise.Ready
				delete(f.stored, k)
			}
		}
		p.Project = sp
		next = append(next, p)
	}
	gone := len(old) > 0 || len(f.stored) > 0
	f.projects = next
	if gone {
		f.save()
	}
	for _, p := range old {
		retire(p.stores)
	}
	for k, r := range f.stored {
		retire(r.stores)
		delete(f.stored, k)
	}
	f.publish()
}
