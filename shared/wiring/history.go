package wiring

import (
	"os"
	"path/filepath"

	"github.com/toolshed/toolshed/shared/githistory"
)

// Histories returns where repositories' histories are read, shared by
// every family of the process: locally each repository's own .git;
// deployed, the histories pushed beside the snapshots, copied into
// TOOLSHED_HISTORY_DIR (githistory.Published).
func (e *Env) Histories() githistory.Histories {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.histories == nil {
		if e.Config.Bucket != "" {
			dir := e.Config.HistoryDir
			if dir == "" {
				dir = filepath.Join(os.TempDir(), "toolshed-history")
			}
			e.histories = &githistory.Published{Bucket: e.S3, Dir: dir}
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
