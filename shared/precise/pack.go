package precise

import (
	"github.com/klauspost/compress/s2"
)

// Blocks (a document's occurrences, a run of symbols, the tables) are
// stored compressed with S2 when that makes them smaller, and as they are
// otherwise: a block whose stored length equals its raw length is not
// compressed. Symbols repeat long prefixes and documentation is prose, so
// S2 halves them; it decodes at memory speed, which a query reading a
// large document's block needs.

// maxRatio bounds how much larger a block's raw length may be than its
// stored one: a reader allocates a block's raw length only when that is
// at most maxRatio times what it read, so a corrupt length cannot make it
// allocate much more than the store holds. The writer stores a block that
// compresses better than that as it is (real blocks compress 2 to 5
// times).
const maxRatio = 64

// pack returns the bytes to store for raw.
func pack(raw []byte) []byte {
	packed := s2.Encode(nil, raw)
	if len(packed) >= len(raw) || len(raw) > maxRatio*len(packed) {
		return raw
	}
	return packed
}

// unpack returns the raw bytes of a stored block whose raw length is
// rawLen (checked by the caller against the store's bounds).
func unpack(stored []byte, rawLen int) ([]byte, error) {
	if len(stored) == rawLen {
		return stored, nil
	}
	if len(stored) > rawLen || rawLen > maxRatio*len(stored) {
		return nil, corrupt("a block of %d bytes cannot hold %d", len(stored), rawLen)
	}
	if n, err := s2.DecodedLen(stored); err != nil || n != rawLen {
		return nil, corrupt("a block does not decode to its length")
	}
	raw, err := s2.Decode(make([]byte, rawLen), stored)
	if err != nil {
		return nil, corrupt("a block does not decode: %v", err)
	}
	return raw, nil
}
