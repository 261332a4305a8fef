package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/sourcegraph/scip/bindings/go/scip"
	"google.golang.org/protobuf/proto"

	"github.com/toolshed/toolshed/shared/language"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/precisebucket/convert"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/sciprun"
)

// precisePush makes the precise indexes a push uploads with the
// snapshot: those of the indexers it runs on the projects it finds
// (unless told not to), and the SCIP files it is given, made elsewhere
// (in CI, say), each checked first as the indexer will convert it.
// Together they are bounded by the repository size limit.
type precisePush struct {
	dir, commit, tenant string
	maxBytes            int64
	index               bool     // run the indexers
	uploads             []string // -scip files
	runner              sciprun.Runner
	policy              *repo.Policy // the deployed tools' (PublishInput.Policy)
	tmp                 string       // where the indexers write
	out                 io.Writer
}

// files is PublishInput.Precise: the indexes of the snapshot snap.
func (pp *precisePush) files(ctx context.Context, snap repo.View) ([]repo.PreciseFile, error) {
	budget := pp.maxBytes
	var out []repo.PreciseFile
	if pp.index {
		made, err := pp.runIndexers(ctx, snap, &budget)
		if err != nil {
			return nil, err
		}
		out = made
	}
	for _, name := range pp.uploads {
		f, err := pp.check(ctx, snap, name, &budget)
		if err != nil {
			return nil, fmt.Errorf("-scip %s: %w", name, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// runIndexers runs the indexer of each project of the snapshot on the
// checkout, in turn; a project whose indexer fails or is not installed is
// recorded with why (its files are answered by search).
func (pp *precisePush) runIndexers(ctx context.Context, snap repo.View, budget *int64) ([]repo.PreciseFile, error) {
	projects, err := sciprun.Projects(ctx, snap)
	if err != nil {
		return nil, err
	}
	var out []repo.PreciseFile
	for i, p := range outermost(projects) {
		p.Version = pp.commit
		x := repo.PreciseIndex{Root: p.Root, Language: string(p.Language), Indexer: p.Indexer, Nested: p.Nested, Vendored: p.Vendored}
		if *budget <= 0 {
			x.Reason = "the precise indexes pushed reached the repository size limit (-max-mb)"
			out = append(out, repo.PreciseFile{Index: x})
			continue
		}
		file := filepath.Join(pp.tmp, fmt.Sprintf("%d.scip", i))
		st, err := pp.runner.Run(ctx, p, filepath.Join(pp.dir, filepath.FromSlash(p.Root)), file,
			sciprun.Limits{OutputBytes: min(*budget, sciprun.DefaultOutputBytes)})
		var run *sciprun.RunError
		switch {
		case errors.As(err, &run):
			// The reason answers show quotes nothing the indexer printed
			// (the repository's content): that is for the terminal.
			x.Reason, x.Unavailable = fmt.Sprintf("%s %v: %s", run.Indexer, run.Kind, run.Detail), errors.Is(err, sciprun.ErrUnavailable)
			fmt.Fprintf(pp.out, "precise: no index of %s (%s): %v\n", p.Root, p.Language, err)
			out = append(out, repo.PreciseFile{Index: x})
			continue
		case err != nil:
			return nil, err
		}
		*budget -= st.OutputBytes
		fmt.Fprintf(pp.out, "precise: %s indexed %s (%s) in %s: %d bytes of SCIP, peak memory %d MB\n",
			p.Indexer, p.Root, p.Language, st.Duration.Round(1e7), st.OutputBytes, st.PeakRSS>>20)
		out = append(out, repo.PreciseFile{Index: x, File: file})
	}
	return out, nil
}

// outermost are the projects to run an indexer on: a Go module's
// emitter indexes the modules below it too, so a Go project inside
// another is left to that one's run, and a Go project has no nested ones.
func outermost(projects []sciprun.Project) []sciprun.Project {
	var out []sciprun.Project
	for _, p := range projects {
		if p.Language != sciprun.Go {
			out = append(out, p)
			continue
		}
		inner := slices.ContainsFunc(projects, func(q sciprun.Project) bool {
			return q.Language == sciprun.Go && q.Root != p.Root && (q.Root == "." || strings.HasPrefix(p.Root, q.Root+"/"))
		})
		if !inner {
			p.Nested = nil
			out = append(out, p)
		}
	}
	return out
}

// check converts the SCIP file name into a store, as the indexer will,
// and returns it as an index of the snapshot with the languages of its
// documents: a file that is not SCIP, is over the budget left, or names
// no file of the snapshot is refused.
func (pp *precisePush) check(ctx context.Context, snap repo.View, name string, budget *int64) (repo.PreciseFile, error) {
	x := repo.PreciseIndex{Root: scipRoot(name, pp.dir), Indexer: repo.Uploaded}
	docs, err := convert.Hashes(ctx, snap, x)
	if err != nil {
		return repo.PreciseFile{}, err
	}
	in, err := os.Open(name)
	if err != nil {
		return repo.PreciseFile{}, err
	}
	defer in.Close()
	store, err := os.CreateTemp(pp.tmp, "check-*.store")
	if err != nil {
		return repo.PreciseFile{}, err
	}
	defer store.Close()
	w := bufio.NewWriterSize(store, 1<<20)
	st, err := convert.Build(ctx, snap, x, in, w, convert.Options{Commit: pp.commit, Tenant: pp.tenant, MaxBytes: *budget, TempDir: pp.tmp, Docs: docs})
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return repo.PreciseFile{}, err
	}
	ix, err := precise.Open(ctx, store, st.Bytes)
	if err != nil {
		return repo.PreciseFile{}, err
	}
	for p := range docs {
		if _, ok := ix.Document(p); ok && !slices.Contains(x.Languages, language.Of(p)) {
			x.Languages = append(x.Languages, language.Of(p))
		}
	}
	slices.Sort(x.Languages)
	*budget -= st.InputBytes
	fmt.Fprintf(pp.out, "precise: checked %s: %d documents of the snapshot under %s (%d others left out), %s, %d bytes\n",
		name, st.Documents, x.Root, st.Skipped, strings.Join(x.Languages, ", "), st.InputBytes)
	return repo.PreciseFile{Index: x, File: name}, nil
}

// scipRoot is the folder of the repository at dir that the SCIP file
// name's document paths are relative to: its metadata's project root when
// that is dir or a folder in it (the index was made in this checkout),
// else the repository's root.
func scipRoot(name, dir string) string {
	m, err := readMetadata(name)
	if err != nil {
		return "."
	}
	u, err := url.Parse(m.ProjectRoot)
	if err != nil || u.Scheme != "file" {
		return "."
	}
	root, err1 := filepath.EvalSymlinks(u.Path)
	top, err2 := filepath.EvalSymlinks(dir)
	if err1 != nil || err2 != nil {
		return "."
	}
	if top, err2 = filepath.Abs(top); err2 != nil {
		return "."
	}
	rel, err := filepath.Rel(top, root)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "."
	}
	return filepath.ToSlash(rel)
}

// maxMetadata bounds the metadata message readMetadata reads.
const maxMetadata = 1 << 20

// readMetadata reads the metadata message a SCIP file starts with (its
// field 1), checking its length before it reads it.
func readMetadata(name string) (*scip.Metadata, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	if tag, err := r.ReadByte(); err != nil || tag != 1<<3|2 {
		return nil, errors.New("the file does not start with SCIP metadata")
	}
	n, err := binary.ReadUvarint(r)
	if err != nil || n > maxMetadata {
		return nil, errors.New("the SCIP metadata is not readable")
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	var m scip.Metadata
	return &m, proto.Unmarshal(buf, &m)
}

// nodeModules is the node_modules folder the npm indexers run from:
// TOOLSHED_NODE_MODULES, else one beside the binary or above it, else the
// one of the Toolshed checkout the binary was built from (go run
// ./scripts/snapshot builds it in a temporary folder); "" when none has
// the indexers, which push then says it skipped, and why.
func nodeModules(setting string) string {
	exe, err := os.Executable()
	if err == nil {
		if dir, err := sciprun.NodeModules(setting, exe); err == nil {
			return dir
		}
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) { // built with -trimpath: no checkout to find
		return ""
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "node_modules")
	if _, err := os.Stat(filepath.Join(dir, "@sourcegraph", "scip-typescript", "package.json")); err != nil {
		return ""
	}
	return dir
}
