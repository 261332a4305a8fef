package goscip

import (
	"fmt"
	"io"
	"time"

	"github.com/sourcegraph/scip/bindings/go/scip"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// The fields of scip.Index: a SCIP file is an Index message, which is
// written here field by field (metadata, then one document at a time), so
// it never has to be held whole.
const (
	indexMetadata  protowire.Number = 1
	indexDocuments protowire.Number = 2
)

// indexWriter streams an Index to w within the limits of Options.
type indexWriter struct {
	w       io.Writer
	o       Options
	stats   Stats
	buf     []byte
	written map[string]bool // document paths, so that none is written twice
}

func newIndexWriter(w io.Writer, o Options) *indexWriter {
	return &indexWriter{w: w, o: o, written: map[string]bool{}}
}

// metadata writes the Index's metadata: project root, UTF-8 text.
func (iw *indexWriter) metadata(root string) error {
	return iw.field(indexMetadata, &scip.Metadata{
		ToolInfo:             &scip.ToolInfo{Name: "toolshed index-go"},
		ProjectRoot:          "file://" + root,
		TextDocumentEncoding: scip.TextEncoding_UTF8,
	})
}

// document writes one document, unless one of its path was written, or it
// would pass a limit (then nothing is written and the error wraps
// ErrLimit).
func (iw *indexWriter) document(doc *scip.Document) error {
	if iw.written[doc.RelativePath] {
		return nil
	}
	if iw.o.MaxDocuments > 0 && iw.stats.Documents >= iw.o.MaxDocuments {
		return fmt.Errorf("goscip: %w: %d documents", ErrLimit, iw.o.MaxDocuments)
	}
	if err := iw.field(indexDocuments, doc); err != nil {
		return err
	}
	iw.written[doc.RelativePath] = true
	iw.stats.Documents++
	iw.stats.Occurrences += len(doc.Occurrences)
	iw.stats.Symbols += len(doc.Symbols)
	return nil
}

// field writes message m as field num of the Index.
func (iw *indexWriter) field(num protowire.Number, m proto.Message) error {
	body, err := proto.MarshalOptions{}.MarshalAppend(iw.buf[:0], m)
	if err != nil {
		return fmt.Errorf("goscip: encoding: %w", err)
	}
	iw.buf = body
	head := protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.BytesType), uint64(len(body)))
	size := int64(len(head) + len(body))
	if iw.o.MaxBytes > 0 && iw.stats.Bytes+size > iw.o.MaxBytes {
		return fmt.Errorf("goscip: %w: %d bytes", ErrLimit, iw.o.MaxBytes)
	}
	if _, err := iw.w.Write(head); err != nil {
		return fmt.Errorf("goscip: writing the index: %w", err)
	}
	if _, err := iw.w.Write(body); err != nil {
		return fmt.Errorf("goscip: writing the index: %w", err)
	}
	iw.stats.Bytes += size
	return nil
}

// done is the stats, with the time since start.
func (iw *indexWriter) done(start time.Time) Stats {
	iw.stats.Elapsed = time.Since(start)
	return iw.stats
}
