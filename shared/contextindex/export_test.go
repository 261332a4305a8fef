package contextindex

import "bytes"

// LexicalBytes is seg's lexical.bin, for tests.
func LexicalBytes(seg *Segment) []byte {
	var b bytes.Buffer
	seg.writeLexical(&b) // a bytes.Buffer never fails
	return b.Bytes()
}
