package schema_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/schema"
)

func TestDuplicateKey(t *testing.T) {
	for _, c := range []struct {
		in      string
		wantKey string
		want    bool
	}{
		{`{"a":1,"b":2}`, "", false},
		{`{"a":1,"a":2}`, "a", true},
		{`{"a":1,"\u0061":2}`, "a", true},              // compared decoded
		{"{\"\xff\":1,\"\xfe\":2}", "\ufffd", true},    // both read as U+FFFD
		{`{"a":{"b":1},"c":{"b":2}}`, "", false},       // one key per object
		{`[{"k":1},{"k":2}]`, "", false},               // array elements are separate objects
		{`{"x":"{\"k\":1,\"k\":2}"}`, "", false},       // inside a string
		{`{"a":"\\","b":[{"c":{},"c":1}]}`, "c", true}, // after an escaped backslash
		{`{"a":[1,{"b":2}],"a":3}`, "a", true},
	} {
		key, got := schema.DuplicateKey([]byte(c.in))
		if got != c.want || key != c.wantKey {
			t.Errorf("DuplicateKey(%s) = %q, %v; want %q, %v", c.in, key, got, c.wantKey, c.want)
		}
	}
}

// FuzzDuplicateKey: on valid JSON, DuplicateKey finds a duplicate exactly
// when encoding/json's tokenizer sees one.
func FuzzDuplicateKey(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"a":{"b":1,"b":2}}`,
		`{"a":"\\"","\u0061":[{"x":{},"y":"}"}]}`,
		`[{"k":1},{"k":2}]`,
		"{\"\xff\":1,\"\xfe\":2}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return
		}
		_, got := schema.DuplicateKey(body)
		if want := tokenDuplicate(t, body); got != want {
			t.Fatalf("DuplicateKey(%q) = %v, encoding/json's tokens say %v", body, got, want)
		}
	})
}

// tokenDuplicate is a slow reference for DuplicateKey: it walks valid JSON
// with encoding/json's tokenizer.
func tokenDuplicate(t *testing.T, body []byte) bool {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers beyond float64 are valid JSON too
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

// BenchmarkDecode: Decode on every tool call's arguments, small and large.
//
//	go test -run '^$' -bench Decode ./shared/schema/
func BenchmarkDecode(b *testing.B) {
	var large strings.Builder
	large.WriteString(`{"entries":[`)
	for i := range 500 {
		if i > 0 {
			large.WriteByte(',')
		}
		fmt.Fprintf(&large, `{"file":"dir/f%d.go","line":%d,"text":"text with \"quotes\" and \u00e9","tags":["a","b"]}`, i, i)
	}
	large.WriteString(`]}`)
	for _, c := range []struct {
		name string
		in   []byte
	}{
		{"small", []byte(`{"path":"src/main.go","pattern":"func \\w+","maxResults":50,"include":["*.go","*.md"]}`)},
		{"large", []byte(large.String())},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := schema.Decode(c.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
