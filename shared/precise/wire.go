package precise

import (
	"encoding/binary"
	"fmt"
	"math"
)

// maxPos bounds every line and column the store holds: SCIP's are int32.
const maxPos = math.MaxInt32

// enc appends the store's primitives to a byte slice: unsigned varints,
// length-prefixed strings, and strings front-coded against the one
// before them (sorted lists share long prefixes: symbols, paths).
type enc struct{ b []byte }

func (e *enc) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

func (e *enc) int(v int) { e.uint(uint64(v)) }

func (e *enc) str(s string) {
	e.int(len(s))
	e.b = append(e.b, s...)
}

// prefixed writes s as the length of the prefix it shares with prev and
// the rest.
func (e *enc) prefixed(prev, s string) {
	n := 0
	for n < len(prev) && n < len(s) && prev[n] == s[n] {
		n++
	}
	e.int(n)
	e.str(s[n:])
}

// occ writes a range, its roles and its enclosing range (if any) relative
// to prev, the range before it in a sorted list (the zero Range for the
// first): lines and, on the same line, columns as differences.
func (e *enc) occ(r Range, roles Roles, encl Range, prev Range) {
	e.rng(r, prev)
	flag := uint64(roles) << 1
	if encl != (Range{}) {
		flag |= 1
	}
	e.uint(flag)
	if encl != (Range{}) {
		e.rng(encl, Range{})
	}
}

func (e *enc) rng(r, prev Range) {
	e.int(r.Line - prev.Line)
	if r.Line == prev.Line {
		e.int(r.Column - prev.Column)
	} else {
		e.int(r.Column)
	}
	e.int(r.EndLine - r.Line)
	if r.EndLine == r.Line {
		e.int(r.EndColumn - r.Column)
	} else {
		e.int(r.EndColumn)
	}
}

// dec reads what enc wrote, from bytes that may be corrupt or hostile:
// the first fault is kept in err and every read after it returns zero,
// so a decoder checks err once at the end. What it makes is bounded by
// the bytes it was given: counts are checked against what is left, and
// the strings front-coding rebuilds (each a prefix of the one before and
// a rest, so a few bytes can claim a long string) add up to at most
// maxRatio times the input.
type dec struct {
	b    []byte
	room int // bytes front-coded strings may still take
	err  error
}

func newDec(b []byte) *dec { return &dec{b: b, room: maxRatio*len(b) + 4096} }

func (d *dec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = corrupt(format, args...)
	}
	d.b = nil
}

// corrupt is ErrCorrupt saying what does not hold.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

func (d *dec) uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// int reads a number no larger than max.
func (d *dec) int(max int) int {
	v := d.uint()
	if v > uint64(max) {
		d.fail("number %d over %d", v, max)
		return 0
	}
	return int(v)
}

// count reads how many items follow, each at least size bytes long.
func (d *dec) count(size int) int {
	return d.int(len(d.b) / size)
}

func (d *dec) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b) {
		d.fail("%d bytes past the end", n-len(d.b))
		return nil
	}
	b := d.b[:n]
	d.b = d.b[n:]
	return b
}

func (d *dec) str() string { return string(d.bytes(d.int(len(d.b)))) }

// prefixed reads a string enc.prefixed wrote after prev.
func (d *dec) prefixed(prev string) string {
	n := d.int(len(prev))
	rest := d.bytes(d.int(len(d.b)))
	if d.room -= n + len(rest); d.room < 0 {
		d.fail("front-coded strings longer than the block could hold")
	}
	if d.err != nil {
		return ""
	}
	return prev[:n] + string(rest)
}

// occ reads what enc.occ wrote after prev.
func (d *dec) occ(prev Range) (r Range, roles Roles, encl Range) {
	r = d.rng(prev)
	flag := d.uint()
	if flag>>1 > math.MaxUint32 {
		d.fail("bad roles")
	}
	roles = Roles(flag >> 1)
	if flag&1 != 0 {
		encl = d.rng(Range{})
	}
	return r, roles, encl
}

func (d *dec) rng(prev Range) Range {
	var r Range
	r.Line = prev.Line + d.int(maxPos)
	if r.Line == prev.Line {
		r.Column = prev.Column + d.int(maxPos)
	} else {
		r.Column = d.int(maxPos)
	}
	r.EndLine = r.Line + d.int(maxPos)
	if r.EndLine == r.Line {
		r.EndColumn = r.Column + d.int(maxPos)
	} else {
		r.EndColumn = d.int(maxPos)
	}
	if d.err == nil && !r.valid() {
		d.fail("bad range %v", r)
	}
	return r
}
