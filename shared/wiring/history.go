package wiring

import (
	"github.com/toolshed/toolshed/shared/githistory"
)

// Histories returns where repositories' histories are read, shared by
// every family of the process: locally each repository's own .git;
// snapshots in the bucket carry none (githistory.Unpublished), so the
// history tools and "ref" answer that the history is not there.
func (e *Env) Histories() githistory.Histories {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.histories == nil {
		if e.Config.Bucket != "" {
			e.histories = githistory.Unpublished{}
		} else {
			e.histories = &githistory.Local{}
		}
	}
	return e.histories
}

// Revisions returns what reads the files of other commits ("ref" of
// read_file and grep_codebase), its views shared by every family of the
// process.
func (e *Env) Revisions() githistory.Revisions {
	histories := e.Histories()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.trees == nil {
		e.trees = &githistory.Trees{}
	}
	return githistory.Revisions{Histories: histories, Trees: e.trees}
}
