package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	v, err := decodeValue(dec, "", 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, path string, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	if depth >= maxDepth {
		return nil, fmt.Errorf("JSON nested deeper than %d levels", maxDepth)
	}
	switch d {
	case '{':
		obj := map[string]any{}
		for dec.More() {
			keyTok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key := keyTok.(string) // the decoder only yields string keys here
			if _, dup := obj[key]; dup {
				return nil, fmt.Errorf("duplicate key %q in %s", key, describe(path))
			}
			v, err := decodeValue(dec, join(path, key), depth+1)
			if err != nil {
				return nil, err
			}
			obj[key] = v
		}
		if _, err := dec.Token(); err != nil { // '}'
			return nil, err
		}
		return obj, nil
	default: // '['
		arr := []any{}
		for i := 0; dec.More(); i++ {
			v, err := decodeValue(dec, fmt.Sprintf("%s[%d]", path, i), depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := dec.Token(); err != nil { // ']'
			return nil, err
		}
		return arr, nil
	}
}

func describe(path string) string {
	if path == "" {
		return "the object"
	}
	return path
}
