package schema_test

import (
	"bytes"
	"encoding/json"
	"errors"
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

func TestFoldedKeys(t *testing.T) {
	tests := []struct {
		keys  []string
		a, b  string
		found bool
	}{
		{[]string{"name", "arguments", "_meta"}, "", "", false},
		{[]string{"name", "NAME"}, "NAME", "name", true},
		{[]string{"id", "Id", "jsonrpc"}, "Id", "id", true},
		{[]string{"kind", "\u212aind"}, "kind", "\u212aind", true}, // the Kelvin sign folds to k
		{[]string{"ſ", "s"}, "s", "ſ", true},                       // long s
		{[]string{"é", "É"}, "É", "é", true},
		{[]string{"a/b", "a\\b", "ab"}, "", "", false},
		{nil, "", "", false},
	}
	for _, tt := range tests {
		obj := map[string]bool{}
		for _, k := range tt.keys {
			obj[k] = true
		}
		a, b, found := schema.FoldedKeys(obj)
		if a != tt.a || b != tt.b || found != tt.found {
			t.Errorf("FoldedKeys(%q) = %q, %q, %v; want %q, %q, %v", tt.keys, a, b, found, tt.a, tt.b, tt.found)
		}
	}
}

// FuzzFoldedKeys: FoldedKeys finds two keys exactly when two different
// keys are equal under strings.EqualFold (encoding/json's matching).
func FuzzFoldedKeys(f *testing.F) {
	for _, seed := range [][2]string{{"name", "NAME"}, {"kind", "\u212aind"}, {"ß", "ẞ"}, {"ǅ", "ǆ"}, {"x", "y"}, {"\xff", "\xfe"}} {
		f.Add(seed[0], seed[1], "arguments")
	}
	f.Fuzz(func(t *testing.T, k1, k2, k3 string) {
		obj := map[string]bool{k1: true, k2: true, k3: true}
		want := false
		for x := range obj {
			for y := range obj {
				want = want || (x != y && strings.EqualFold(x, y))
			}
		}
		a, b, got := schema.FoldedKeys(obj)
		if got != want || (got && (a == b || !strings.EqualFold(a, b) || !obj[a] || !obj[b])) {
			t.Fatalf("FoldedKeys(%q) = %q, %q, %v; strings.EqualFold says %v", []string{k1, k2, k3}, a, b, got, want)
		}
	})
}

// flexible records whether its UnmarshalJSON ran, null included.
type flexible struct{ called bool }

func (f *flexible) UnmarshalJSON([]byte) error { f.called = true; return nil }

// TestUnmarshal: keys set the field of exactly their name; the rest is as
// encoding/json does it.
func TestUnmarshal(t *testing.T) {
	type entry struct {
		Title string `json:"title"`
	}
	type input struct {
		Name  string   `json:"name"`
		Count int      `json:"count"`
		Entry entry    `json:"entry"`
		Note  flexible `json:"note"`
	}
	tests := []struct {
		in      string
		want    input
		wantErr string
	}{
		{`{"name":"a","count":2,"entry":{"title":"t"}}`, input{Name: "a", Count: 2, Entry: entry{"t"}}, ""},
		{`{"NAME":"a","Count":2,"entry":{"TITLE":"t"}}`, input{}, ""}, // no field of those names
		{`{"name":"a","NAME":"b","entry":{"title":"t","Title":"u"}}`, input{Name: "a", Entry: entry{"t"}}, ""},
		{`{"n\u0061me":"a"}`, input{Name: "a"}, ""},                // keys compared decoded
		{`{"note":null}`, input{Note: flexible{called: true}}, ""}, // UnmarshalJSON sees null
		{`{"count":1.5}`, input{}, "count"},                        // an *json.UnmarshalTypeError naming the field
		{`{"name":"a"} {}`, input{Name: "a"}, "unexpected data after the JSON value"},
	}
	for _, tt := range tests {
		var got input
		err := schema.Unmarshal([]byte(tt.in), &got)
		var ute *json.UnmarshalTypeError
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tt.in, err)
		case tt.wantErr == "count" && !(errors.As(err, &ute) && ute.Field == "count"):
			t.Errorf("%s: %v, want an UnmarshalTypeError for count", tt.in, err)
		case tt.wantErr != "" && tt.wantErr != "count" && (err == nil || err.Error() != tt.wantErr):
			t.Errorf("%s: %v, want %q", tt.in, err, tt.wantErr)
		case tt.wantErr == "" && got != tt.want:
			t.Errorf("%s: %+v, want %+v", tt.in, got, tt.want)
		}
	}
}
