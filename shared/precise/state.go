package precise

import "time"

// State is how far the precise indexing of one repository is, as answers
// report it: an answer about a file is precise when a ready project covers
// the file and the file has not changed since (DocInfo.Changed), and
// otherwise made by search, saying why (Why).
type State struct {
	// Projects are the repository's indexable projects (a Go module, a
	// TypeScript or Python project, an uploaded index), each with how far
	// its indexing is.
	Projects []ProjectState
	// Cover returns the project (an index into Projects) that covers the
	// file at path, or -1 and why none does ("no indexer reads kotlin",
	// "not in a Go module"); nil when nothing is covered.
	Cover func(path string) (project int, why string)
	// Unchanged says the ready indexes were made of the view's own files
	// (a deployed snapshot's, converted for its commit) and hold no stale
	// document: no file has changed since it was indexed, so an answer
	// need not read every file to find those that did.
	Unchanged bool
}

// ProjectState is how far the indexing of one project is.
type ProjectState struct {
	Root     string // the project's folder, relative to the repository ("" for its root)
	Language string // as shared/language names it
	Indexer  string // what indexes it ("goscip", "scip-typescript", "upload", ...)
	Status   Status
	// Reason says why a project is not ready: what failed, what is
	// missing, or how far a running index is. It never quotes the
	// repository's content.
	Reason string
	Commit string    // the commit of the ready index ("" before one is)
	Since  time.Time // when Status last changed
}

// Status is where a project's indexing stands.
type Status string

// The statuses of a project's indexing.
const (
	Queued      Status = "queued"      // waiting for its turn
	Running     Status = "running"     // its indexer runs
	Ready       Status = "ready"       // its index answers (a re-index may be running)
	Failed      Status = "failed"      // its indexer failed (Reason says how)
	Unavailable Status = "unavailable" // nothing here can index it (Reason says what is missing)
)

// Why returns why answers about the file at path are made by search, or
// "" when a ready index covers it. changed reports whether the file's
// content differs from the one indexed (DocInfo.Changed).
func (s State) Why(path string, changed bool) string {
	if s.Cover == nil {
		return "no precise index covers this repository"
	}
	i, why := s.Cover(path)
	if i < 0 || i >= len(s.Projects) {
		return why
	}
	p := s.Projects[i]
	switch {
	case p.Status != Ready && p.Reason == "":
		return "the " + p.Language + " index is " + string(p.Status)
	case p.Status != Ready:
		return "the " + p.Language + " index is " + string(p.Status) + ": " + p.Reason
	case changed:
		return "the file changed since it was indexed"
	}
	return ""
}
