package contextindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// Embedder turns texts into vectors, one per text in order. Model names
// the model and its settings (dimensions): vectors of different models are
// never mixed.
type Embedder interface {
	Model() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Vectors are unit-length float32 vectors of one model, keyed by the hash
// of the text they embed (TextHash). They are the embedding cache: a text
// whose hash has a vector is never embedded again.
type Vectors struct {
	Model string
	Dims  int
	rows  map[string]int // hash → row
	keys  []string       // row → hash
	data  []float32      // rows × Dims
}

// NewVectors returns an empty set for a model.
func NewVectors(model string) *Vectors {
	return &Vectors{Model: model, rows: map[string]int{}}
}

// Len returns how many vectors the set holds.
func (v *Vectors) Len() int { return len(v.keys) }

// Get returns the vector of a text hash.
func (v *Vectors) Get(hash string) ([]float32, bool) {
	if v == nil {
		return nil, false
	}
	i, ok := v.rows[hash]
	if !ok {
		return nil, false
	}
	return v.data[i*v.Dims : (i+1)*v.Dims : (i+1)*v.Dims], true
}

// Add stores a vector, normalised to unit length. The first vector fixes
// the dimensions; a vector of other dimensions, or of zero length, is an
// error. Adding a hash again keeps the first vector.
func (v *Vectors) Add(hash string, vec []float32) error {
	if _, ok := v.rows[hash]; ok {
		return nil
	}
	if v.Dims == 0 {
		v.Dims = len(vec)
	}
	if len(vec) != v.Dims || v.Dims == 0 {
		return fmt.Errorf("vector of %d dimensions, the %s vectors have %d", len(vec), v.Model, v.Dims)
	}
	u, err := unit(vec)
	if err != nil {
		return err
	}
	v.rows[hash] = len(v.keys)
	v.keys = append(v.keys, hash)
	v.data = append(v.data, u...)
	return nil
}

// unit returns vec scaled to unit length; a vector of zero or undefined
// length is an error.
func unit(vec []float32) ([]float32, error) {
	var sum float64
	for _, x := range vec {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return nil, errors.New("vector of zero or undefined length")
	}
	inv := float32(1 / math.Sqrt(sum))
	out := make([]float32, len(vec))
	for i, x := range vec {
		out[i] = x * inv
	}
	return out, nil
}

// EmbedQuery embeds a search query the way documents are embedded
// (EmbedText) and returns its unit-length vector, ready for Query.Vector.
func EmbedQuery(ctx context.Context, emb Embedder, text string) ([]float32, error) {
	vecs, err := emb.Embed(ctx, []string{Doc{Content: text}.EmbedText()})
	if err != nil {
		return nil, err
	}
	if len(vecs) != 1 {
		return nil, fmt.Errorf("embedder returned %d vectors for 1 query", len(vecs))
	}
	return unit(vecs[0])
}

// EmbedMissing embeds the texts whose hash has no vector yet, batch texts
// at a time, and adds their vectors. It returns how many texts it embedded.
func (v *Vectors) EmbedMissing(ctx context.Context, emb Embedder, texts []string, batch int) (int, error) {
	if emb.Model() != v.Model {
		return 0, fmt.Errorf("embed with %s into %s vectors", emb.Model(), v.Model)
	}
	seen := map[string]bool{}
	var todo []string
	for _, t := range texts {
		h := TextHash(t)
		if _, ok := v.rows[h]; ok || seen[h] {
			continue
		}
		seen[h] = true
		todo = append(todo, t)
	}
	for start := 0; start < len(todo); start += batch {
		part := todo[start:min(start+batch, len(todo))]
		vecs, err := emb.Embed(ctx, part)
		if err != nil {
			return start, fmt.Errorf("embed %d texts with %s: %w", len(part), emb.Model(), err)
		}
		if len(vecs) != len(part) {
			return start, fmt.Errorf("embed %d texts with %s: got %d vectors", len(part), emb.Model(), len(vecs))
		}
		for i, t := range part {
			if err := v.Add(TextHash(t), vecs[i]); err != nil {
				return start, fmt.Errorf("embedding of %s: %w", emb.Model(), err)
			}
		}
	}
	return len(todo), nil
}

// Subset returns the vectors of the given hashes that v has, in a new set.
func (v *Vectors) Subset(hashes []string) *Vectors {
	out := NewVectors(v.Model)
	out.Dims = v.Dims
	for _, h := range hashes {
		if vec, ok := v.Get(h); ok {
			_ = out.Add(h, vec) // already unit length and of the right size
		}
	}
	return out
}

// Dot returns the dot product of two vectors of equal length: their
// cosine similarity when both are unit length.
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// ---- encoding ----

// vectorsMagic starts an encoded vector file (vectors.bin).
const vectorsMagic = "TSVEC1\n"

// maxModelName bounds the model name in a vector file.
const maxModelName = 256

// Marshal encodes the set: magic, the model name, dimensions and count,
// then per vector its 32-byte hash and Dims little-endian float32s,
// ordered by hash so equal sets encode equally.
func (v *Vectors) Marshal() []byte {
	var b bytes.Buffer
	v.Encode(&b) // a bytes.Buffer never fails
	return b.Bytes()
}

// Encode writes the encoding Marshal returns to w (vectors.bin), without
// holding it in memory.
func (v *Vectors) Encode(w io.Writer) error {
	head := []byte(vectorsMagic)
	head = binary.AppendUvarint(head, uint64(len(v.Model)))
	head = append(head, v.Model...)
	head = binary.AppendUvarint(head, uint64(v.Dims))
	head = binary.AppendUvarint(head, uint64(len(v.keys)))
	if _, err := w.Write(head); err != nil {
		return err
	}
	order := slices.Clone(v.keys)
	slices.Sort(order)
	buf := make([]byte, 32+4*v.Dims)
	for _, h := range order {
		if _, err := hex.Decode(buf[:32], []byte(h)); err != nil {
			return fmt.Errorf("vectors: key %q is not a SHA-256", h)
		}
		vec, _ := v.Get(h)
		for i, x := range vec {
			binary.LittleEndian.PutUint32(buf[32+4*i:], math.Float32bits(x))
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// UnmarshalVectors decodes the output of Marshal.
func UnmarshalVectors(data []byte) (*Vectors, error) {
	if !bytes.HasPrefix(data, []byte(vectorsMagic)) {
		return nil, errors.New("vectors: not a vectors.bin file")
	}
	rest := data[len(vectorsMagic):]
	next := func(max uint64) (uint64, error) {
		x, n := binary.Uvarint(rest)
		if n <= 0 || x > max {
			return 0, errors.New("vectors: corrupt header")
		}
		rest = rest[n:]
		return x, nil
	}
	nameLen, err := next(maxModelName)
	if err != nil || uint64(len(rest)) < nameLen {
		return nil, errors.New("vectors: corrupt header")
	}
	v := NewVectors(string(rest[:nameLen]))
	rest = rest[nameLen:]
	dims, err := next(1 << 16)
	if err != nil {
		return nil, err
	}
	count, err := next(uint64(len(rest)))
	if err != nil {
		return nil, err
	}
	row := 32 + 4*dims
	if uint64(len(rest)) != count*row {
		return nil, fmt.Errorf("vectors: %d bytes for %d vectors of %d dimensions", len(rest), count, dims)
	}
	v.Dims = int(dims)
	v.data = make([]float32, 0, count*dims)
	for i := uint64(0); i < count; i++ {
		rec := rest[i*row : (i+1)*row]
		h := hex.EncodeToString(rec[:32])
		if _, dup := v.rows[h]; dup {
			return nil, errors.New("vectors: a hash appears twice")
		}
		v.rows[h] = len(v.keys)
		v.keys = append(v.keys, h)
		for j := uint64(0); j < dims; j++ {
			x := math.Float32frombits(binary.LittleEndian.Uint32(rec[32+4*j:]))
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, errors.New("vectors: a value is not a finite number")
			}
			v.data = append(v.data, x)
		}
	}
	return v, nil
}

// AddAll adds the vectors of another set of the same model.
func (v *Vectors) AddAll(o *Vectors) error {
	if o.Model != v.Model {
		return fmt.Errorf("add %s vectors to %s vectors", o.Model, v.Model)
	}
	for i, h := range o.keys {
		if err := v.Add(h, o.data[i*o.Dims:(i+1)*o.Dims]); err != nil {
			return err
		}
	}
	return nil
}

// from returns the vectors added from row on (rows count in the order
// vectors were added), sharing their memory.
func (v *Vectors) from(row int) *Vectors {
	out := &Vectors{Model: v.Model, Dims: v.Dims, rows: make(map[string]int, len(v.keys)-row),
		keys: v.keys[row:], data: v.data[row*v.Dims:]}
	for i, h := range out.keys {
		out.rows[h] = i
	}
	return out
}
