package mcpserver

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
)

// FuzzParseMessage: parseMessage never panics, and what it accepts is one
// JSON object with a string method and, if any, an id the SDK echoes
// exactly (a string, or an integer within ±maxID).
func FuzzParseMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"hello","arguments":{"name":"x"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}{}`,
		`{"a":{"b":1,"b":2}}`,
		`{"a":"\\"","\u0061":[{"x":{},"y":"}"}]}`,
		`[{"k":1},{"k":2}]`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		"\xff",
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if json.Valid(body) {
			_, got := duplicateKey(body)
			if want := tokenDuplicate(t, body); got != want {
				t.Fatalf("duplicateKey(%q) = %v, encoding/json's tokens say %v", body, got, want)
			}
		}
		msg, rej := parseMessage(body)
		if rej != nil {
			if rej.code == 0 || rej.message == "" {
				t.Fatalf("rejection without code or message: %+v", rej)
			}
			return
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(body, &fields); err != nil {
			t.Fatalf("accepted %q, which is not a JSON object: %v", body, err)
		}
		if msg.method == "" {
			t.Fatalf("accepted %q without a method", body)
		}
		if msg.id == nil || msg.id[0] == '"' {
			return
		}
		n, err := strconv.ParseInt(string(msg.id), 10, 64)
		if err != nil || n > maxID || n < -maxID || float64(n) != float64(int64(float64(n))) {
			t.Fatalf("accepted id %s, which the SDK cannot echo exactly", msg.id)
		}
	})
}

// tokenDuplicate is a slow reference for duplicateKey: it walks valid JSON
// with encoding/json's tokenizer.
func tokenDuplicate(t *testing.T, body []byte) bool {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	var walk func() bool
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			dup := false
			for dec.More() {
				key, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				dup = dup || seen[key.(string)]
				seen[key.(string)] = true
				dup = walk() || dup
			}
			dec.Token()
			return dup
		case json.Delim('['):
			dup := false
			for dec.More() {
				dup = walk() || dup
			}
			dec.Token()
			return dup
		}
		return false
	}
	return walk()
}
