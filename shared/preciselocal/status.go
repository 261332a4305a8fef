package preciselocal

import (
	"time"

	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/reposcope"
)

// RepoStatus is what the server's status (/healthz) says of one
// repository's precise indexes.
type RepoStatus struct {
	Repository string          `json:"repository"`
	Projects   []ProjectStatus `json:"projects"`
}

// ProjectStatus is how far one project is, with its stores and its last
// indexer run.
type ProjectStatus struct {
	Root     string         `json:"root"` // "" for the repository's root
	Language string         `json:"language"`
	Indexer  string         `json:"indexer"`
	Status   precise.Status `json:"status"`
	Reason   string         `json:"reason,omitempty"`
	Commit   string         `json:"commit,omitempty"`
	Since    time.Time      `json:"since"`
	Files    int            `json:"files"` // the files it covers
	Stores   []StoreStatus  `json:"stores"`
	LastRun  *Run           `json:"lastRun,omitempty"`
}

// StoreStatus describes one store of a project.
type StoreStatus struct {
	Commit    string   `json:"commit"`
	Packages  []string `json:"packages,omitempty"` // an overlay's
	Documents int      `json:"documents"`
	Bytes     int64    `json:"bytes"`
}

// Run is what one indexer run did.
type Run struct {
	Full      bool      `json:"full"`
	Packages  []string  `json:"packages,omitempty"`
	Started   time.Time `json:"started"`
	IndexerMS int64     `json:"indexerMs"`
	PeakRSS   int64     `json:"indexerPeakRss"` // bytes
	SCIPBytes int64     `json:"scipBytes"`
	ConvertMS int64     `json:"convertMs"`
	// ConvertPeakRSS is the converter's (bytes): it runs as a process of
	// its own, so the server's memory holds nothing of it.
	ConvertPeakRSS int64  `json:"convertPeakRss"`
	Documents      int    `json:"documents"`
	StoreBytes     int64  `json:"storeBytes"`
	Error          string `json:"error,omitempty"` // why it made no store, as the project's reason says
}

// Status says how far the indexes of the repositories repos (nil: every
// one) are.
func (k *Keeper) Status(repos []string) []RepoStatus {
	out := []RepoStatus{}
	for _, f := range k.list() {
		if reposcope.Allows(repos, f.name) {
			out = append(out, RepoStatus{Repository: f.name, Projects: f.current().status})
		}
	}
	return out
}

// report is the project's status.
func (p *project) report() ProjectStatus {
	st := p.state()
	s := ProjectStatus{Root: st.Root, Language: st.Language, Indexer: st.Indexer, Status: st.Status, Reason: st.Reason,
		Commit: st.Commit, Since: st.Since, Files: p.Files, Stores: []StoreStatus{}}
	for _, store := range p.stores {
		s.Stores = append(s.Stores, StoreStatus{Commit: store.commit, Packages: store.packages,
			Documents: store.ix.Stats().Documents, Bytes: store.bytes})
	}
	if p.last != nil {
		last := *p.last
		s.LastRun = &last
	}
	return s
}
