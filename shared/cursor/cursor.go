// Package cursor makes and checks the paging cursors of every list tool:
// the next_cursor of an answer, given back as cursor in the next call.
//
// A cursor is tied to the call it was made for, its Scope: the listing
// (kind: the tool, or one of its listings), the caller's tenant, the
// repository the call reads (as it resolved: the one a "repo" argument
// names, or the caller's default one) and the call's other arguments
// (every one but cursor and limit, so a client may change its page size
// from page to page, and repo, which the repository stands for). It carries the position the
// next page starts from, as a few fields (whole numbers and strings), and
// an HMAC-SHA256 under the deployment's Key over the scope and the
// fields. So a cursor the server did not issue for this listing and these
// arguments, however it was made (edited, forged, another tool's, another
// call's, another deployment's), is INVALID_INPUT naming "cursor", and a
// position that reaches a tool is one that tool issued.
//
// The key is the same in every function and instance of a deployment, or
// cursors would fail from one instance to the next: shared/wiring decides
// where it comes from and hands it to the tools.
//
// A cursor is the unpadded base64url encoding of the fields (a number as
// an unsigned varint, a string as its length and its bytes) followed by
// the first 16 bytes of the HMAC. It is opaque to clients.
package cursor

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// Field is the argument name cursors travel in.
const Field = "cursor"

// MinKeyLen is the shortest key, in bytes.
const MinKeyLen = 32

// MaxLen is the longest cursor Decode reads, in characters (the
// contracts' maxLength is at most this).
const MaxLen = 4096

// tagLen is how many bytes of the HMAC a cursor carries: 128 bits.
const tagLen = 16

var encoding = base64.RawURLEncoding.Strict()

// Key authenticates the cursors of one deployment.
type Key struct{ secret []byte }

// NewKey returns the key made of secret, at least MinKeyLen bytes.
func NewKey(secret []byte) (Key, error) {
	if len(secret) < MinKeyLen {
		return Key{}, fmt.Errorf("a cursor key is at least %d bytes; this one is %d", MinKeyLen, len(secret))
	}
	return Key{secret: append([]byte(nil), secret...)}, nil
}

// RandomKey returns a new random key: the key of a process whose cursors
// need not outlive it (a test, a program without a data directory).
func RandomKey() Key {
	secret := make([]byte, MinKeyLen)
	rand.Read(secret) // never fails (crypto/rand)
	return Key{secret: secret}
}

// Scope is what the cursors of one call are tied to.
type Scope struct {
	key     []byte
	binding [sha256.Size]byte
}

// Scope returns the scope of a call to the listing kind by tenant, over
// the repository it resolved to (its name; "" for a listing of no
// repository), with args, the call's input (a tool's input struct: it
// must encode as a JSON object), whose "cursor", "limit" and "repo"
// members are left out. A zero Key panics: the tools were built without
// the wiring's key.
func (k Key) Scope(kind, tenant, repository string, args any) Scope {
	if len(k.secret) == 0 {
		panic("cursor: a zero Key; build the tools with the wiring's key")
	}
	raw, err := json.Marshal(args)
	var members map[string]json.RawMessage
	if err == nil {
		err = json.Unmarshal(raw, &members)
	}
	if err != nil || members == nil {
		panic(fmt.Sprintf("cursor: the arguments %T do not encode as a JSON object: %v", args, err))
	}
	delete(members, Field)
	delete(members, "limit")
	delete(members, "repo")
	canonical, _ := json.Marshal(members) // keys sorted; raw members are valid JSON
	h := sha256.New()
	for _, part := range []string{kind, tenant, repository, string(canonical)} {
		h.Write(binary.AppendUvarint(nil, uint64(len(part))))
		h.Write([]byte(part))
	}
	s := Scope{key: k.secret}
	h.Sum(s.binding[:0])
	return s
}

// Encode returns the cursor of a position made of fields, each an int or
// int64 (at least 0) or a string, in the order Decode reads them.
func (s Scope) Encode(fields ...any) string {
	var body []byte
	for _, f := range fields {
		switch v := f.(type) {
		case int:
			body = appendNumber(body, int64(v))
		case int64:
			body = appendNumber(body, v)
		case string:
			body = binary.AppendUvarint(body, uint64(len(v)))
			body = append(body, v...)
		default:
			panic(fmt.Sprintf("cursor: a field of type %T", f))
		}
	}
	return encoding.EncodeToString(append(body, s.tag(body)...))
}

func appendNumber(body []byte, n int64) []byte {
	if n < 0 {
		panic(fmt.Sprintf("cursor: a negative position %d", n))
	}
	return binary.AppendUvarint(body, uint64(n))
}

// Decode reads a cursor Encode made in this scope into fields, pointers
// (*int, *int64, *string) in the order they were encoded. An empty cursor
// (the first page) leaves them as they are. Anything else is INVALID_INPUT
// naming "cursor" (Refused), and leaves them as they are too.
func (s Scope) Decode(cursor string, fields ...any) error {
	if cursor == "" {
		return nil
	}
	if len(cursor) > MaxLen {
		return Refused()
	}
	raw, err := encoding.DecodeString(cursor)
	if err != nil || len(raw) < tagLen {
		return Refused()
	}
	body, tag := raw[:len(raw)-tagLen], raw[len(raw)-tagLen:]
	if !hmac.Equal(tag, s.tag(body)) {
		return Refused()
	}
	values, ok := read(body, fields)
	if !ok {
		return Refused()
	}
	for i, f := range fields {
		switch p := f.(type) {
		case *int:
			*p = int(values[i].(uint64))
		case *int64:
			*p = int64(values[i].(uint64))
		case *string:
			*p = values[i].(string)
		}
	}
	return nil
}

// read reads one value per field from body: a uint64 for *int (at most
// math.MaxInt) and *int64 (at most math.MaxInt64), a string for *string.
// It reports whether body held exactly that.
func read(body []byte, fields []any) ([]any, bool) {
	values := make([]any, len(fields))
	for i, f := range fields {
		n, size := binary.Uvarint(body)
		if size <= 0 {
			return nil, false
		}
		body = body[size:]
		switch f.(type) {
		case *int:
			if n > math.MaxInt {
				return nil, false
			}
			values[i] = n
		case *int64:
			if n > math.MaxInt64 {
				return nil, false
			}
			values[i] = n
		case *string:
			if n > uint64(len(body)) {
				return nil, false
			}
			values[i], body = string(body[:n]), body[n:]
		default:
			panic(fmt.Sprintf("cursor: a field of type %T", f))
		}
	}
	return values, len(body) == 0
}

// tag is the HMAC of the scope and a cursor's body, cut to tagLen.
func (s Scope) tag(body []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(s.binding[:])
	m.Write(body)
	return m.Sum(nil)[:tagLen]
}

// Refused is the error of a cursor that was not issued for the call: a
// tool returns it too for a position it cannot use.
func Refused() error {
	return toolerr.Field(Field, "was not issued for this call: pass back the next_cursor of the previous page, "+
		"with the same arguments (only limit may change), or leave cursor out to start from the first page")
}
