package navcheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/precise/fromscip"
	"github.com/toolshed/toolshed/shared/sciprun"
	"github.com/toolshed/toolshed/shared/testenv/precisetest"
)

// Store answers from precise indexes directly, as the tools answer from
// them: the symbol at a position (the innermost), its definitions and its
// references.
type Store struct{ Set *precise.Set }

// Definitions returns the definitions of every symbol at the position (a
// Go embedded field is its type's reference and the field's definition).
func (s Store) Definitions(ctx context.Context, at Location) ([]Location, error) {
	occs, err := s.Set.At(ctx, at.Path, at.Line, at.Column)
	if err != nil {
		return nil, err
	}
	var defs []Location
	for _, o := range occs {
		info, ok, err := s.Set.Symbol(ctx, o.Symbol)
		if err != nil {
			return nil, err
		}
		if ok {
			for _, d := range info.Definitions {
				defs = append(defs, Location{Path: d.Path, Line: d.Line, Column: d.Column})
			}
		}
	}
	return defs, nil
}

// References returns the references of the innermost symbol at the
// position, every page, its definitions left out.
func (s Store) References(ctx context.Context, at Location) ([]Location, error) {
	occs, err := s.Set.At(ctx, at.Path, at.Line, at.Column)
	if err != nil || len(occs) == 0 {
		return nil, err
	}
	var refs []Location
	var after precise.Location
	for {
		page, more, err := s.Set.References(ctx, occs[0].Symbol, after, precise.MaxPage)
		if err != nil {
			return nil, err
		}
		for _, o := range page {
			if o.Roles&precise.Definition == 0 {
				refs = append(refs, Location{Path: o.Path, Line: o.Line, Column: o.Column})
			}
		}
		if !more || len(page) == 0 {
			return refs, nil
		}
		after = page[len(page)-1].Location()
	}
}

// Converted is a store made from a SCIP index, open, and what making it
// took. Close closes its file.
type Converted struct {
	Index *precise.Index
	Stats fromscip.Stats
	Took  time.Duration
	Bytes int64 // the store's size
	file  *os.File
}

func (c *Converted) Close() error { return c.file.Close() }

// Served is c as a repository's index of a language (as shared/language
// names it), for Serve.
func (c *Converted) Served(language, indexer string) precisetest.Index {
	return precisetest.Index{Index: c.Index, Language: language, Indexer: indexer}
}

// Convert turns the SCIP index in scipFile into a store in dir and opens
// it. text reads a project's file by its path (for indexers whose columns
// are UTF-16 code units); nil when columns are bytes.
func Convert(ctx context.Context, scipFile, dir string, text func(string) ([]byte, error)) (*Converted, error) {
	in, err := os.Open(scipFile)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	out, err := os.Create(filepath.Join(dir, filepath.Base(scipFile)+".store"))
	if err != nil {
		return nil, err
	}
	start := time.Now()
	// SkipOutside: goscip may name files outside the tree (none here,
	// but an index of cgo code would).
	stats, err := fromscip.Build(ctx, in, out, fromscip.Options{Commit: "bench", SkipOutside: true, Text: text, TempDir: dir})
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("converting %s: %w", scipFile, err)
	}
	c := &Converted{Stats: stats, Took: time.Since(start), file: out}
	fi, err := out.Stat()
	if err == nil {
		c.Bytes = fi.Size()
		c.Index, err = precise.Open(ctx, out, c.Bytes)
	}
	if err != nil {
		out.Close()
		return nil, err
	}
	return c, nil
}

// NewStore is the Store of one repository's indexes.
func NewStore(stores ...*Converted) (Store, error) {
	var indexes []*precise.Index
	for _, c := range stores {
		indexes = append(indexes, c.Index)
	}
	set, err := precise.NewSet("bench", precise.Repository{Name: "repo", Indexes: indexes})
	return Store{Set: set}, err
}

// IndexTS runs scip-typescript (from nodeModules, through sciprun with
// its default limits) on the TypeScript project at dir and converts its
// index into a store in work.
func IndexTS(ctx context.Context, nodeModules, dir, work string) (*Converted, sciprun.RunStats, error) {
	projects, err := sciprun.Projects(ctx, os.DirFS(dir))
	if err != nil {
		return nil, sciprun.RunStats{}, err
	}
	i := slices.IndexFunc(projects, func(p sciprun.Project) bool { return p.Language == sciprun.TypeScript && p.Root == "." })
	if i < 0 {
		return nil, sciprun.RunStats{}, fmt.Errorf("no TypeScript project at the top of %s", dir)
	}
	scipFile := filepath.Join(work, "ts.scip")
	run, err := sciprun.Runner{NodeModules: nodeModules}.Run(ctx, projects[i], dir, scipFile, sciprun.Limits{})
	if err != nil {
		return nil, run, err
	}
	c, err := Convert(ctx, scipFile, work, func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, filepath.FromSlash(p))) })
	return c, run, err
}
