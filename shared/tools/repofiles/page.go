package repofiles

import (
	"bytes"
	"context"
	"io"
	"math"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// pageBuffer is how much of a file readPage reads at a time.
const pageBuffer = 64 << 10

// page is what readPage keeps of a file read as a stream.
type page struct {
	content    []byte // lines start to end, each with its line ending
	start, end int    // the lines content holds (1-based, inclusive)
	cut        bool   // end is short of the line asked for: one more would pass the limit
	lines      int    // lines of the whole file (repo.CountLines)
	size       int64  // bytes of the whole file
	head       []byte // the file's first bytes, up to the headBytes asked for
}

// readPage reads r, the file at path, to its end and keeps lines start to
// end (1-based, inclusive; start 0: from the first line; end 0 or past the
// last line: to the last line), cut after the last whole line that keeps
// them within maxBytes, and the first headBytes of the file. Whatever the
// file's size, it holds no more than that and one buffer. A start past the
// last line is INVALID_INPUT saying how many lines there are, and so is an
// end before the start; a first line over maxBytes alone is
// SIZE_LIMIT_EXCEEDED. It stops when ctx ends.
//
// It reads r to its end whatever the range, and fails with r's error:
// not only to count the lines, but because a view's reader may refuse a
// file only there (its secret check refuses a file whose key lies after
// the lines asked for), and no range of a refused file may be answered.
// Stopping early would need the check done some other way first.
func readPage(ctx context.Context, r io.Reader, path string, start, end, maxBytes, headBytes int) (page, error) {
	if start == 0 {
		start = 1
	}
	if end > 0 && end < start {
		return page{}, toolerr.Field("endLine", "is %d, before startLine %d", end, start)
	}
	p := pager{page: page{start: start}, path: path, stop: end, maxBytes: maxBytes, line: 1, keep: true}
	if end == 0 {
		p.stop = math.MaxInt
	}
	buf := make([]byte, pageBuffer)
	var last byte // the file's last byte
	for {
		if err := ctx.Err(); err != nil {
			return page{}, err
		}
		n, err := r.Read(buf)
		if n > 0 {
			p.size += int64(n)
			p.head = append(p.head, buf[:min(n, max(headBytes-len(p.head), 0))]...)
			last = buf[n-1]
			if err := p.take(buf[:n]); err != nil {
				return page{}, err
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return page{}, err
		}
	}
	p.lines = p.line - 1
	if p.size > 0 && last != '\n' {
		p.lines++ // a last line without a newline counts
	}
	if start > p.lines {
		return page{}, toolerr.Field("startLine", "is %d, past the end: the file has %d lines", start, p.lines)
	}
	if !p.cut {
		p.end = min(p.stop, p.lines)
	}
	return p.page, nil
}

// pager is readPage's progress through a file.
type pager struct {
	page
	path           string
	stop, maxBytes int  // the last line to keep; the most bytes of lines kept
	line, lineAt   int  // the line the next byte belongs to; where it starts in content
	keep           bool // lines are still kept: not past maxBytes
}

// take counts the lines of chunk, the next bytes of the file, and keeps
// those of the range. The newlines of chunk are counted once: what is
// left of it once no line of it is kept is counted from that (counting
// the rest again at every line kept took time in the square of the lines
// of a chunk).
func (p *pager) take(chunk []byte) error {
	left := bytes.Count(chunk, newline) // the newlines in what is left of chunk
	for len(chunk) > 0 {
		if !p.keep || p.line > p.stop || p.line+left < p.start {
			p.line += left // nothing of the rest of chunk is kept
			return nil
		}
		seg := chunk // the rest of a line, or the start of one that goes on
		if i := bytes.IndexByte(chunk, '\n'); i >= 0 {
			seg = chunk[:i+1]
		}
		if p.line >= p.start {
			if len(p.content)+len(seg) > p.maxBytes {
				if err := p.full(); err != nil {
					return err
				}
				continue // count the lines of the rest
			}
			p.content = append(p.content, seg...)
		}
		chunk = chunk[len(seg):]
		if seg[len(seg)-1] == '\n' {
			p.line++
			left--
			p.lineAt = len(p.content)
		}
	}
	return nil
}

// full ends the page at the last whole line before p.line, whose next
// bytes would pass maxBytes; the file is read on only to count its lines.
func (p *pager) full() error {
	if p.lineAt == 0 {
		return toolerr.New(toolerr.SizeLimitExceeded, "line %d of %s alone is over the limit of %d bytes an answer holds", p.line, p.path, p.maxBytes).
			With("path", p.path).With("line", p.line).With("limitBytes", p.maxBytes)
	}
	p.content, p.end, p.cut, p.keep = p.content[:p.lineAt], p.line-1, true, false
	return nil
}

var newline = []byte{'\n'}
