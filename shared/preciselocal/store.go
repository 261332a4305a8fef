package preciselocal

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/sciprun"
)

// scratchDir is the folder, in a view's, where indexers write SCIP and
// the conversion spills; emptied at start.
const scratchDir = "scratch"

// retireAfter is how long a replaced store stays open: a call that took
// it before it was replaced finishes with it (every call's deadline is
// shorter).
const retireAfter = 2 * time.Minute

// store is one open store of a project.
type store struct {
	path     string
	commit   string
	packages []string // an overlay's; nil: the whole project
	ix       *precise.Index
	file     *os.File
	bytes    int64
}

// index runs p's indexer as w says and makes its store one of p's.
func (f *follower) index(ctx context.Context, p *project, w work) error {
	scratch := filepath.Join(f.dir, scratchDir)
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return fmt.Errorf("precise: %w", err)
	}
	scip := filepath.Join(scratch, "index.scip")
	defer os.Remove(scip)
	commit := f.view.Commit()
	version := p.moduleVersion
	if w.full {
		version = commit // overlays keep the version of the store they overlay, so symbols link
	}
	job := p.Project
	job.Version, job.Packages = commit, w.packages
	run := &Run{Full: w.full, Packages: w.packages, Started: time.Now()}
	p.last = run
	f.k.Runs.Add(1)
	stats, err := f.k.runner(version).Run(ctx, job, filepath.Join(f.src, filepath.FromSlash(p.Root)), scip, f.k.o.Limits)
	run.IndexerMS, run.PeakRSS, run.SCIPBytes = stats.Duration.Milliseconds(), stats.PeakRSS, stats.OutputBytes
	if err != nil {
		return err
	}
	s, conv, err := f.convert(ctx, p, scip, w, commit)
	run.ConvertMS, run.ConvertPeakRSS = conv.Duration.Milliseconds(), conv.PeakRSS
	if err != nil {
		return err
	}
	run.Documents, run.StoreBytes = s.ix.Stats().Documents, s.bytes
	f.adopt(p, s, w, version)
	f.log.Info("precise: indexed", "root", p.Root, "language", p.Language, "full", w.full, "why", w.why,
		"packages", len(w.packages), "documents", run.Documents, "indexer_ms", run.IndexerMS,
		"indexer_peak_rss_mb", stats.PeakRSS>>20, "scip_mb", stats.OutputBytes>>20, "convert_ms", run.ConvertMS,
		"convert_peak_rss_mb", conv.PeakRSS>>20, "store_mb", s.bytes>>20)
	return nil
}

// convert makes the store of the SCIP index at scip with the converter
// (ConvertCommand, as a separate process held to the indexers' limits),
// written aside and renamed into place, and opens it.
func (f *follower) convert(ctx context.Context, p *project, scip string, w work, commit string) (*store, sciprun.RunStats, error) {
	if len(f.k.o.Converter) == 0 {
		return nil, sciprun.RunStats{}, &sciprun.RunError{Indexer: ConvertName, Kind: sciprun.ErrUnavailable,
			Detail: "this binary has no " + ConvertName + " subcommand to convert indexes with"}
	}
	scratch := filepath.Join(f.dir, scratchDir)
	docs := filepath.Join(scratch, "docs.json")
	if err := writeDocs(docs, w.files); err != nil {
		return nil, sciprun.RunStats{}, fmt.Errorf("precise: %w", err)
	}
	out, err := os.CreateTemp(f.dir, string(p.Language)+"-*.idx.tmp")
	if err != nil {
		return nil, sciprun.RunStats{}, fmt.Errorf("precise: %w", err)
	}
	out.Close()
	defer os.Remove(out.Name()) // gone once renamed
	// Values as -flag=value: a commit or a folder's name is never read as a flag.
	argv := append(slices.Clone(f.k.o.Converter), "-o="+out.Name(), "-docs="+docs, "-repo="+f.src,
		"-commit="+commit, "-root="+p.Root, "-tmp="+scratch, scip)
	stats, err := f.k.o.Runner.Exec(ctx, ConvertName, argv, out.Name(), f.k.o.Limits)
	if err != nil {
		return nil, stats, err
	}
	final := strings.TrimSuffix(out.Name(), ".tmp")
	if err := os.Rename(out.Name(), final); err != nil {
		return nil, stats, fmt.Errorf("precise: %w", err)
	}
	s, err := openStore(ctx, final)
	if err != nil {
		os.Remove(final)
		return nil, stats, err
	}
	s.commit, s.packages = commit, w.packages
	return s, stats, nil
}

// writeDocs writes files' hashes where the converter reads them (-docs).
func writeDocs(name string, files map[string][32]byte) error {
	hexes := make(map[string]string, len(files))
	for p, h := range files {
		hexes[p] = hex.EncodeToString(h[:])
	}
	return writeAside(name, hexes)
}

// adopt makes s one of p's stores: the only one after a whole index
// (those it replaces are let go once the manifest names s), else an
// overlay on the others.
func (f *follower) adopt(p *project, s *store, w work, version string) {
	replaced := p.stores
	if w.full {
		p.stores, p.moduleVersion = []*store{s}, version
	} else {
		replaced = nil
		p.stores = append(p.stores, s)
	}
	p.inputs, p.failedOn = w.inputs, nil
	f.save()
	retire(replaced)
}

// openStore opens the store at path.
func openStore(ctx context.Context, path string) (*store, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("precise: %w", err)
	}
	info, err := file.Stat()
	var ix *precise.Index
	if err == nil {
		ix, err = precise.Open(ctx, file, info.Size())
	}
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("precise: open %s: %w", filepath.Base(path), err)
	}
	return &store{path: path, ix: ix, file: file, bytes: info.Size()}, nil
}

// retire lets stores go: their files are removed now, and closed once
// the calls that may still read them are done.
func retire(stores []*store) {
	for _, s := range stores {
		os.Remove(s.path)
		time.AfterFunc(retireAfter, func() { s.file.Close() })
	}
}

// closeStores closes stores at once.
func closeStores(stores []*store) {
	for _, s := range stores {
		s.file.Close()
	}
}

// runner is the Runner of a run whose Go symbols carry version.
func (k *Keeper) runner(version string) sciprun.Runner {
	r := k.o.Runner
	if len(r.GoIndexer) > 0 {
		r.GoIndexer = append(slices.Clone(r.GoIndexer), "-tests")
		if version != "" {
			r.GoIndexer = append(r.GoIndexer, "-module-version="+version) // never read as a flag
		}
	}
	return r
}
