package symbols

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"

	"github.com/toolshed/toolshed/shared/language"
)

// Store keeps a table's symbols between processes, next to the view's
// code index (see the wiring): a table loads them when it starts and
// parses only the files whose content changed since they were saved, and
// saves them once it is ready (and again when it closes, if it parsed
// files since). What is stored is a pure function of each file's path and
// content, so a stored table can never answer for a file whose content
// differs: an entry is used only for the same path and the same SHA-256.
type Store interface {
	// Load returns what Save saved, or an error wrapping fs.ErrNotExist
	// when nothing was.
	Load(ctx context.Context) ([]byte, error)
	Save(ctx context.Context, data []byte) error
}

// storedFormat names the encoding and the parsers' rules: a table saved
// under another (an earlier version, a build with other grammars, other
// grammar versions or queries, another Go) is ignored, and every file
// parsed again.
var storedFormat = "symbols-2/" + parsersVersion()

// parsersVersion names what the symbols of a file depend on besides its
// path and content: the Go toolchain (go/parser), which files
// shared/language's table gives which parser (parsingRules), and
// tree-sitter's grammars and queries in a build that has them.
func parsersVersion() string {
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version())
	parsingRules(h, language.Table())
	treeSitterVersion(h)
	return fmt.Sprintf("%x", h.Sum(nil)[:8])
}

// parsingRules writes what rows, the language table's, say of which
// parser reads a file: the extensions, file names and prefixes each row
// claims, its parser and its dialects. A row's name, MIME type and
// whether it is code change no symbol: a change to them keeps the stored
// tables.
func parsingRules(w io.Writer, rows []language.Language) {
	for _, l := range rows {
		fmt.Fprintf(w, "%q %q %q %q %v\n", l.Extensions, l.Files, l.Prefixes, l.Parser, l.Dialects) // fmt prints a map's keys sorted
	}
}

// storedTable is what a Store holds.
type storedTable struct {
	Format string
	Files  []storedFile
}

// storedFile is one file's symbols, for the content whose hash is Hash.
type storedFile struct {
	Path    string
	Hash    [sha256.Size]byte
	Symbols []Symbol
}

// encodeTable encodes the parsed files of held, deflated.
func encodeTable(held map[string]parsed) ([]byte, error) {
	t := storedTable{Format: storedFormat, Files: make([]storedFile, 0, len(held))}
	for p, h := range held {
		t.Files = append(t.Files, storedFile{Path: p, Hash: h.src.Hash(), Symbols: h.file.Symbols})
	}
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.BestSpeed) // the level is valid
	if err := gob.NewEncoder(zw).Encode(t); err != nil {
		return nil, fmt.Errorf("encode the symbol table: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("encode the symbol table: %w", err)
	}
	return buf.Bytes(), nil
}

// maxStoredBytes bounds what decodeTable inflates (a table of five
// copies of the Go tree takes about 100 MB).
const maxStoredBytes = 1 << 30

// decodeTable decodes what encodeTable made into stored files by path;
// a table of another format is none (fs.ErrNotExist).
func decodeTable(data []byte) (map[string]storedFile, error) {
	var t storedTable
	r := io.LimitReader(flate.NewReader(bytes.NewReader(data)), maxStoredBytes)
	if err := gob.NewDecoder(r).Decode(&t); err != nil {
		return nil, fmt.Errorf("decode the symbol table: %w", err)
	}
	if t.Format != storedFormat {
		return nil, fmt.Errorf("a symbol table of format %q, this version reads %q: %w", t.Format, storedFormat, fs.ErrNotExist)
	}
	out := make(map[string]storedFile, len(t.Files))
	for _, f := range t.Files {
		if err := f.check(); err != nil {
			return nil, fmt.Errorf("decode the symbol table: %s: %w", f.Path, err)
		}
		out[f.Path] = f
	}
	return out, nil
}

// check refuses a stored file whose symbols could not come from a parse:
// offsets out of order or parents out of range (a table is only read
// from where this program saved it, but a corrupt one must not panic a
// lookup).
func (f storedFile) check() error {
	for i, s := range f.Symbols {
		if s.Start < 1 || s.End < s.Start || s.From < 0 || s.To < s.From || s.NameAt < 0 || s.DocFrom < 0 || s.DocTo < s.DocFrom ||
			s.Parent < -1 || s.Parent >= i {
			return errors.New("symbol out of range")
		}
	}
	return nil
}

// fits reports whether the stored symbols index a text of size bytes:
// every offset within it (the hash says it is the same text; this keeps a
// collision or a corrupt entry from slicing out of range).
func (f storedFile) fits(size int) bool {
	for _, s := range f.Symbols {
		if s.To > size || s.DocTo > size || s.NameAt > size {
			return false
		}
	}
	return true
}
