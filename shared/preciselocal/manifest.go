package preciselocal

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/toolshed/toolshed/shared/sciprun"
)

// manifestName is the manifest's file in a view's folder.
const manifestName = "manifest.json"

// manifestVersion is the manifest's format: one of another version is
// ignored (every project is indexed again).
const manifestVersion = 1

// manifest is what a view's folder holds: each project's stores and what
// they were made of.
type manifest struct {
	Version  int               `json:"version"`
	Projects []manifestProject `json:"projects"`
}

type manifestProject struct {
	Language      sciprun.Language  `json:"language"`
	Root          string            `json:"root"`
	ModuleVersion string            `json:"moduleVersion,omitempty"`
	Config        string            `json:"config"` // hex SHA-256
	Files         map[string]string `json:"files"`  // path → hex SHA-256
	Stores        []manifestStore   `json:"stores"`
}

type manifestStore struct {
	File     string   `json:"file"` // in the view's folder
	Commit   string   `json:"commit"`
	Packages []string `json:"packages,omitempty"`
}

// load opens the stores the manifest names (f.stored, for reconcile to
// give to their projects) and removes everything else in the folder: a
// crash's leftovers, stores that do not open, the scratch folder.
func (f *follower) load(ctx context.Context) {
	f.stored = map[projectKey]*record{}
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		f.log.Warn("precise: no folder for the indexes", "error", err)
		return
	}
	keep := map[string]bool{manifestName: true}
	var m manifest
	data, err := os.ReadFile(filepath.Join(f.dir, manifestName))
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil || m.Version != manifestVersion:
		f.log.Warn("precise: the manifest is unreadable; indexing again", "error", err, "version", m.Version)
		m = manifest{}
	}
	for _, mp := range m.Projects {
		r, err := openRecord(ctx, f.dir, mp)
		if err != nil {
			f.log.Warn("precise: a stored index is damaged; indexing its project again", "root", mp.Root, "language", mp.Language, "error", err)
			continue
		}
		for _, s := range r.stores {
			keep[filepath.Base(s.path)] = true
		}
		f.k.Reused.Add(int64(len(r.stores)))
		f.stored[projectKey{mp.Language, mp.Root}] = r
	}
	entries, _ := os.ReadDir(f.dir)
	for _, e := range entries {
		if !keep[e.Name()] {
			os.RemoveAll(filepath.Join(f.dir, e.Name()))
		}
	}
}

// openRecord opens a project's stores as the manifest names them.
func openRecord(ctx context.Context, dir string, mp manifestProject) (*record, error) {
	r := &record{moduleVersion: mp.ModuleVersion, inputs: inputs{files: make(map[string][32]byte, len(mp.Files))}}
	var err error
	if r.config, err = unhex(mp.Config); err != nil {
		return nil, err
	}
	for p, h := range mp.Files {
		if r.files[p], err = unhex(h); err != nil {
			return nil, err
		}
	}
	for _, ms := range mp.Stores {
		if ms.File != filepath.Base(ms.File) || ms.File == manifestName {
			err = fmt.Errorf("precise: the manifest names %q", ms.File)
		}
		var s *store
		if err == nil {
			s, err = openStore(ctx, filepath.Join(dir, ms.File))
		}
		if err != nil {
			closeStores(r.stores)
			return nil, err
		}
		s.commit, s.packages = ms.Commit, ms.Packages
		r.stores = append(r.stores, s)
	}
	if len(r.stores) == 0 {
		return nil, errors.New("precise: the manifest names no store")
	}
	return r, nil
}

// unhex reads a hex SHA-256.
func unhex(s string) ([32]byte, error) {
	var h [32]byte
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(h) {
		return h, fmt.Errorf("precise: %q is not a SHA-256", s)
	}
	copy(h[:], b)
	return h, nil
}

// save writes the manifest of the projects' stores: aside, flushed and
// renamed into place, so a crash leaves the last one.
func (f *follower) save() {
	m := manifest{Version: manifestVersion, Projects: []manifestProject{}}
	for _, p := range f.projects {
		if p.stores == nil {
			continue
		}
		mp := manifestProject{Language: p.Language, Root: p.Root, ModuleVersion: p.moduleVersion,
			Config: hex.EncodeToString(p.config[:]), Files: make(map[string]string, len(p.files))}
		for path, h := range p.files {
			mp.Files[path] = hex.EncodeToString(h[:])
		}
		for _, s := range p.stores {
			mp.Stores = append(mp.Stores, manifestStore{File: filepath.Base(s.path), Commit: s.commit, Packages: s.packages})
		}
		m.Projects = append(m.Projects, mp)
	}
	if err := writeAside(filepath.Join(f.dir, manifestName), m); err != nil {
		f.log.Warn("precise: the manifest was not saved; a restart indexes again", "error", err)
	}
}

// writeAside writes v as JSON to path: aside, flushed, renamed into place.
func writeAside(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".manifest-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	if _, err = tmp.Write(data); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return err
}
