package fromscip

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/sourcegraph/scip/bindings/go/scip"

	"github.com/toolshed/toolshed/shared/precise"
)

// encoding is the unit of a document's columns: its PositionEncoding, or
// when it gives none, the unit its indexer counts in.
func encoding(e scip.PositionEncoding, tool string) scip.PositionEncoding {
	if e != scip.PositionEncoding_UnspecifiedPositionEncoding {
		return e
	}
	if name, _, _ := strings.Cut(tool, " "); name == "scip-typescript" || name == "scip-python" {
		return scip.PositionEncoding_UTF16CodeUnitOffsetFromLineStart
	}
	return scip.PositionEncoding_UTF8CodeUnitOffsetFromLineStart
}

// columns converts a document's SCIP ranges to 1-based lines and byte
// columns.
type columns struct {
	enc   scip.PositionEncoding
	text  []byte
	lines []int // where each line starts, made when first needed
}

func newColumns(enc scip.PositionEncoding, text []byte) *columns {
	return &columns{enc: enc, text: text}
}

// rng converts a SCIP range ([startLine, startChar, endChar] or
// [startLine, startChar, endLine, endChar], 0-based); false when it is not
// one.
func (c *columns) rng(r []int32) (precise.Range, bool) {
	var sl, sc, el, ec int32
	switch len(r) {
	case 3:
		sl, sc, el, ec = r[0], r[1], r[0], r[2]
	case 4:
		sl, sc, el, ec = r[0], r[1], r[2], r[3]
	default:
		return precise.Range{}, false
	}
	if sl < 0 || sc < 0 || el < 0 || ec < 0 {
		return precise.Range{}, false
	}
	return precise.Range{Line: int(sl) + 1, Column: c.byteColumn(int(sl), int(sc)) + 1,
		EndLine: int(el) + 1, EndColumn: c.byteColumn(int(el), int(ec)) + 1}, true
}

// byteColumn converts a 0-based column in code units of line to bytes.
// A line the text does not have (a stale document) keeps its column.
func (c *columns) byteColumn(line, units int) int {
	if c.enc == scip.PositionEncoding_UTF8CodeUnitOffsetFromLineStart {
		return units
	}
	if c.lines == nil {
		c.lines = lineStarts(c.text)
	}
	if line >= len(c.lines) {
		return units
	}
	text := c.text[c.lines[line]:]
	if i := bytes.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	i, n := 0, 0
	for i < len(text) && n < units {
		r, size := utf8.DecodeRune(text[i:])
		i += size
		n++
		if r >= 0x10000 && c.enc == scip.PositionEncoding_UTF16CodeUnitOffsetFromLineStart {
			n++ // a surrogate pair
		}
	}
	if n < units { // past the end of the line: as many bytes further
		i += units - n
	}
	return i
}

// lineStarts returns where each line of text starts.
func lineStarts(text []byte) []int {
	starts := []int{0}
	for i, b := range text {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}
