// Package fromscip converts a SCIP index (github.com/sourcegraph/scip,
// the one exchange format of precise code intelligence) into the store of
// package precise, streaming: each document is read, converted and
// written as it comes (scip.IndexVisitor.ParseStreaming), and what it
// says of symbols is gathered within the writer's memory budget.
//
// It lives apart from package precise so that the tools, which only read
// stores, do not link the SCIP bindings (and their dependencies).
//
// What an index may hold is checked, since uploads come from users:
//   - input that is not SCIP, or is truncated, is ErrNotSCIP; input over
//     Options.MaxBytes, or a message over 256 MiB, is ErrTooLarge — both
//     refused before anything of that size is allocated;
//   - a document whose path is not a clean relative path, or (with
//     Options.Docs) not one of the snapshot's, is ErrOutside, naming it;
//     with Options.SkipOutside such documents are left out instead, but
//     an index none of whose documents is in the snapshot is still
//     ErrOutside (it is of another tree, or its paths are relative to
//     another folder: see Options.Root).
//
// Paths are the snapshot's: an indexer that names documents from the
// project it indexed (Options.Root) has them prefixed with its folder. A
// document whose indexer names no language takes shared/language's.
//
// Where an indexer's symbols differ from its compiler's in ways the index
// itself shows, they are corrected as they are read (relink.go), so that
// every reader of the store answers as the compiler does: scip-typescript
// names a class's constructor at `new C()`, which the TypeScript compiler
// counts among C's references, and gives the parameters of all of a
// function's overloads one symbol, where each overload declares its own.
//
// Positions become what every answer gives: 1-based lines and byte
// columns. SCIP's are 0-based, and its columns are in the code units of
// the document's PositionEncoding: UTF-8 bytes, or UTF-16 (or UTF-32)
// code units, converted to bytes with the document's text. Indexers that
// leave the encoding unspecified are taken at what they do:
// scip-typescript and scip-python count UTF-16 units (both run on
// JavaScript strings), the others bytes.
package fromscip

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"

	"github.com/sourcegraph/scip/bindings/go/scip"

	"github.com/toolshed/toolshed/shared/language"
	"github.com/toolshed/toolshed/shared/precise"
)

var (
	// ErrNotSCIP is input that is not a SCIP index.
	ErrNotSCIP = errors.New("not a SCIP index")
	// ErrTooLarge is input over Options.MaxBytes, or with a message over
	// 256 MiB.
	ErrTooLarge = errors.New("SCIP index too large")
	// ErrOutside is a document whose path is not one of the snapshot's.
	ErrOutside = errors.New("SCIP document outside the snapshot")
)

// Options says what an index is of and how to read it.
type Options struct {
	Commit string
	Tenant string // see precise.WriterOptions.Tenant
	// Root is the folder of the repository the index's document paths are
	// relative to (where its indexer ran: a project's folder, slash
	// separated), "" or "." for the repository's root. Documents are
	// stored, checked against Docs and read with Text by their path from
	// the repository's root; a path that leaves Root ("../x") stays
	// outside.
	Root string
	// Docs is the snapshot's documents (path → SHA-256 of the content):
	// a SCIP document outside it is refused (ErrOutside). nil trusts every
	// document whose path is a clean relative one (hashes unknown).
	Docs map[string][32]byte
	// SkipOutside leaves out (Stats.Skipped) the documents outside the
	// snapshot instead of refusing the index: those Docs does not have,
	// and those whose path is not a clean relative one (scip-go gives the
	// files cgo generates by their place in the build cache,
	// "../../../root/.cache/go-build/…"). An index whose documents are
	// all outside is refused all the same (ErrOutside).
	SkipOutside bool
	// Text reads a document's content as the indexer read it. It is
	// needed for documents whose columns are not bytes; with Docs too,
	// every document's text is read and one that hashes otherwise than
	// Docs says is marked stale. Without it, a document's own text in
	// the index (SCIP's Document.text) is used where it is given.
	Text func(path string) ([]byte, error)
	// MaxBytes bounds the input (0: no bound).
	MaxBytes int64
	// TempDir and MemoryBytes are precise.WriterOptions'.
	TempDir     string
	MemoryBytes int64
}

// Stats counts what Build read and wrote.
type Stats struct {
	precise.Stats
	InputBytes int64
	Skipped    int // documents outside Docs left out (SkipOutside)
	Stale      int // documents whose text differs from the snapshot's
	Converted  int // documents whose columns were converted to bytes
}

// Build reads the SCIP index r gives and writes its store to w.
func Build(ctx context.Context, r io.Reader, w io.Writer, o Options) (Stats, error) {
	if o.Root == "." {
		o.Root = ""
	}
	if o.Root != "" && !precise.ValidPath(o.Root) {
		return Stats{}, fmt.Errorf("fromscip: the root %q is not a clean relative path", o.Root)
	}
	b := &builder{o: o, out: w}
	g := newGuard(r, o.MaxBytes)
	v := scip.IndexVisitor{VisitMetadata: b.metadata, VisitDocument: b.document, VisitExternalSymbol: b.external}
	err := v.ParseStreaming(ctx, g)
	b.stats.InputBytes = g.n
	switch {
	case b.err != nil:
		return b.stats, b.err
	case g.err != nil:
		return b.stats, g.err
	case err != nil:
		return b.stats, fmt.Errorf("%w: %v", ErrNotSCIP, err)
	case g.n == 0:
		return b.stats, fmt.Errorf("%w: the input is empty", ErrNotSCIP)
	case b.kept == 0 && b.stats.Skipped > 0:
		return b.stats, fmt.Errorf("%w: none of its %d documents is a file of the snapshot (are its paths relative to another folder?)",
			ErrOutside, b.stats.Skipped)
	}
	st, err := b.writer().Close(ctx)
	b.stats.Stats = st
	return b.stats, err
}

// builder is what the visitor functions share.
type builder struct {
	o     Options
	out   io.Writer
	w     *precise.Writer // made at the first message: the metadata names the indexer
	tool  string
	stats Stats
	kept  int   // documents written
	err   error // the first failure of a visitor (ParseStreaming wraps what they return)
}

func (b *builder) writer() *precise.Writer {
	if b.w == nil {
		b.w = precise.NewWriter(b.out, precise.WriterOptions{Commit: b.o.Commit, Tenant: b.o.Tenant,
			Indexer: b.tool, TempDir: b.o.TempDir, MemoryBytes: b.o.MemoryBytes})
	}
	return b.w
}

func (b *builder) fail(err error) error {
	if err != nil && b.err == nil {
		b.err = err
	}
	return err
}

func (b *builder) metadata(ctx context.Context, m *scip.Metadata) error {
	if t := m.GetToolInfo(); t != nil && b.w == nil {
		b.tool = t.Name
		if t.Version != "" {
			b.tool += " " + t.Version
		}
	}
	return b.fail(ctx.Err())
}

func (b *builder) external(ctx context.Context, s *scip.SymbolInformation) error {
	return b.fail(b.writer().AddExternalSymbol(ctx, symbolInfo(s)))
}

// document converts and writes a document.
func (b *builder) document(ctx context.Context, d *scip.Document) error {
	if err := ctx.Err(); err != nil {
		return b.fail(err)
	}
	path := d.RelativePath
	valid := precise.ValidPath(path)
	if valid && b.o.Root != "" {
		path = b.o.Root + "/" + path
	}
	hash, known := b.o.Docs[path]
	var outside error
	switch {
	case !valid:
		outside = fmt.Errorf("%w: %q is not a clean relative path", ErrOutside, path)
	case b.o.Docs != nil && !known:
		outside = fmt.Errorf("%w: %s is not in the snapshot", ErrOutside, path)
	}
	if outside != nil && b.o.SkipOutside {
		b.stats.Skipped++
		return nil
	}
	if outside != nil {
		return b.fail(outside)
	}
	cols, stale, err := b.columns(d, path, hash)
	if err != nil {
		return b.fail(err)
	}
	lang := d.Language
	if lang == "" {
		lang = language.Of(path) // scip-typescript and scip-python name none
	}
	doc := precise.Document{Path: path, Language: lang, Hash: hash, Stale: stale,
		Occurrences: make([]precise.Occurrence, 0, len(d.Occurrences)), Symbols: make([]precise.SymbolInfo, 0, len(d.Symbols))}
	for _, o := range d.Occurrences {
		r, ok := cols.rng(o.Range)
		if !ok {
			r = precise.Range{} // the writer drops it and counts it
		}
		encl, _ := cols.rng(o.EnclosingRange)
		doc.Occurrences = append(doc.Occurrences, precise.Occurrence{Range: r, Symbol: o.Symbol, Roles: precise.Roles(uint32(o.SymbolRoles)), Enclosing: encl})
	}
	for _, s := range d.Symbols {
		doc.Symbols = append(doc.Symbols, symbolInfo(s))
	}
	relink(&doc)
	b.kept++
	return b.fail(b.writer().AddDocument(ctx, doc))
}

// columns reads what converting d's columns needs, and whether d (the
// document at path) is stale.
func (b *builder) columns(d *scip.Document, path string, hash [32]byte) (*columns, bool, error) {
	enc := encoding(d.PositionEncoding, b.tool)
	var text []byte
	switch {
	case b.o.Text != nil && (enc != scip.PositionEncoding_UTF8CodeUnitOffsetFromLineStart || b.o.Docs != nil):
		t, err := b.o.Text(path)
		if err != nil {
			return nil, false, fmt.Errorf("fromscip: reading %s: %w", path, err)
		}
		text = t
	case enc != scip.PositionEncoding_UTF8CodeUnitOffsetFromLineStart && d.Text != "":
		text = []byte(d.Text)
	case enc != scip.PositionEncoding_UTF8CodeUnitOffsetFromLineStart:
		return nil, false, fmt.Errorf("fromscip: %s counts columns in %v: Options.Text is needed to convert them", path, enc)
	}
	stale := b.o.Docs != nil && b.o.Text != nil && sha256.Sum256(text) != hash
	if stale {
		b.stats.Stale++
	}
	if enc != scip.PositionEncoding_UTF8CodeUnitOffsetFromLineStart {
		b.stats.Converted++
	}
	return newColumns(enc, text), stale, nil
}
