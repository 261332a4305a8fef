package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	exactjson "github.com/segmentio/encoding/json"
)

// maxDepth bounds how deeply arrays and objects may nest in a request.
const maxDepth = 64

// Decode decodes exactly one JSON value the way Toolshed reads requests:
// numbers kept exact (json.Number), objects as map[string]any, and an error
// for what JSON allows but no caller means — a key given twice in one
// object (decoders disagree on which one wins), data after the value, and
// nesting deeper than 64 levels.
func Decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	switch dup, tooDeep := scanObjects(raw, maxDepth); {
	case tooDeep:
		return nil, fmt.Errorf("JSON nested deeper than %d levels", maxDepth)
	case dup != nil:
		return nil, fmt.Errorf("duplicate key %q in %s", dup.key, describe(dup.path))
	}
	return v, nil
}

// Unmarshal decodes raw, exactly one JSON value, into v the way the MCP
// SDK reads requests: an object's key sets the struct field of exactly
// that name. encoding/json also takes a key that differs only in case
// ("NAME" for "name", and the last such key wins), so a JSON Schema
// validator, which matches names exactly, and a decoder into structs would
// read different fields of one object. Everything else (numbers, null,
// json.Unmarshaler, the errors) is as encoding/json does it.
func Unmarshal(raw []byte, v any) error {
	rest, err := exactjson.Parse(raw, v, exactjson.DontMatchCaseInsensitiveStructFields)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// FoldedKeys returns two keys of one object that differ only in case, as
// encoding/json folds names when it matches keys to struct fields (Unicode
// simple folding, bytes.EqualFold: "id" and "ID", "kind" and "\u212aind"),
// the first two in sorted order. Readers of such an object disagree on
// which key is meant, so callers refuse it.
func FoldedKeys[V any](obj map[string]V) (a, b string, found bool) {
	seen := make(map[string]string, len(obj))
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		folded := foldKey(key)
		if first, ok := seen[folded]; ok {
			return first, key, true
		}
		seen[folded] = key
	}
	return "", "", false
}

// foldKey maps every rune of key to the smallest rune of its case-folding
// orbit, so that foldKey(x) == foldKey(y) exactly when
// strings.EqualFold(x, y).
func foldKey(key string) string {
	return strings.Map(func(r rune) rune {
		for {
			next := unicode.SimpleFold(r)
			if next <= r {
				return next
			}
			r = next
		}
	}, key)
}

// DuplicateKey returns a key given twice in one object anywhere in raw,
// which must be valid JSON. Keys are compared decoded, so "a" and "\u0061"
// are the same key. It is the check Decode makes, for callers that read
// JSON without decoding it into values: it reads the bytes once and builds
// only the key sets of the open objects (mcpserver checks whole JSON-RPC
// messages with it before the SDK decodes them).
func DuplicateKey(raw []byte) (string, bool) {
	dup, _ := scanObjects(raw, -1)
	if dup == nil {
		return "", false
	}
	return dup.key, true
}

// duplicate is a key given twice in the object at path ("" for the
// outermost value; "a.b[2]" names one inside it, as field errors do).
type duplicate struct {
	key, path string
}

// scanObjects reads raw, which must be valid JSON, once, keeping only the
// set of keys of each open object, and stops at the first key given twice
// in one object or, when maxDepth is not negative, at an array or object
// nested deeper than maxDepth levels. Keys are compared as a decoder reads
// them: escapes decoded, invalid UTF-8 replaced.
func scanObjects(raw []byte, maxDepth int) (dup *duplicate, tooDeep bool) {
	var open []scanLevel
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '{', '[':
			if len(open) == maxDepth {
				return nil, true
			}
			if raw[i] == '{' {
				open = append(open, scanLevel{keys: map[string]bool{}, expectKey: true})
			} else {
				open = append(open, scanLevel{})
			}
		case '}', ']':
			open = open[:len(open)-1]
		case ',':
			if top := &open[len(open)-1]; top.keys != nil {
				top.expectKey = true
			} else {
				top.index++
			}
		case '"':
			end := stringEnd(raw, i)
			if n := len(open); n > 0 && open[n-1].expectKey {
				top := &open[n-1]
				key := decodeKey(raw[i : end+1])
				if top.keys[key] {
					return &duplicate{key: key, path: levelsPath(open[:n-1])}, false
				}
				top.keys[key] = true
				top.key = key
				top.expectKey = false
			}
			i = end
		}
	}
	return nil, false
}

// scanLevel is an array or object that scanObjects is in.
type scanLevel struct {
	keys      map[string]bool // nil for an array
	key       string          // an object's latest key
	index     int             // an array's current element
	expectKey bool
}

// levelsPath names the value that the open levels lead to, as field errors
// do.
func levelsPath(open []scanLevel) string {
	path := ""
	for _, l := range open {
		if l.keys != nil {
			path = join(path, l.key)
		} else {
			path += "[" + strconv.Itoa(l.index) + "]"
		}
	}
	return path
}

// stringEnd returns the index of the quote that ends the JSON string whose
// opening quote is raw[start].
func stringEnd(raw []byte, start int) int {
	end := start + 1
	for raw[end] != '"' {
		if raw[end] == '\\' {
			end++
		}
		end++
	}
	return end
}

// decodeKey returns the key that the quoted JSON string is, as a decoder
// reads it: escapes decoded, invalid UTF-8 replaced.
func decodeKey(quoted []byte) string {
	key := string(quoted[1 : len(quoted)-1])
	if bytes.IndexByte(quoted, '\\') >= 0 || !utf8.ValidString(key) {
		json.Unmarshal(quoted, &key) // valid JSON: cannot fail
	}
	return key
}

func describe(path string) string {
	if path == "" {
		return "the object"
	}
	return path
}
