package cursor_test

import (
	"encoding/base64"
	"math"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/toolerr"
)

type args struct {
	Path   string   `json:"path"`
	Globs  []string `json:"globs"`
	Limit  int      `json:"limit"`
	Cursor string   `json:"cursor"`
	Repo   string   `json:"repo"`
}

var key = mustKey(strings.Repeat("k", cursor.MinKeyLen))

func mustKey(secret string) cursor.Key {
	k, err := cursor.NewKey([]byte(secret))
	if err != nil {
		panic(err)
	}
	return k
}

func TestRoundTrip(t *testing.T) {
	scope := key.Scope("list_files", "acme", "web", args{Path: "src"})
	for _, pos := range []struct {
		n    int
		id   int64
		path string
	}{{0, 1, ""}, {7, 1 << 40, "a/b.go"}, {math.MaxInt, math.MaxInt64, "日本/x y:z"}} {
		c := scope.Encode(pos.n, pos.id, pos.path)
		if strings.ContainsAny(c, "=+/") {
			t.Errorf("cursor %q is not unpadded base64url", c)
		}
		var n int
		var id int64
		var path string
		if err := scope.Decode(c, &n, &id, &path); err != nil || n != pos.n || id != pos.id || path != pos.path {
			t.Errorf("Decode(Encode(%v)) = %d, %d, %q, %v", pos, n, id, path, err)
		}
	}
	// A new page size, the cursor itself, or naming the repository the
	// call resolved to otherwise (repo left out for the default one) is
	// not another call.
	c := scope.Encode(3)
	for _, same := range []args{{Path: "src", Limit: 500, Cursor: c}, {Path: "src", Repo: "web"}, {Path: "src", Repo: "default"}} {
		var n int
		if err := key.Scope("list_files", "acme", "web", same).Decode(c, &n); err != nil || n != 3 {
			t.Errorf("%+v: %d, %v", same, n, err)
		}
	}
	var n int
	// No cursor: the fields keep their values.
	n = 42
	if err := scope.Decode("", &n); err != nil || n != 42 {
		t.Errorf(`Decode("") = %d, %v`, n, err)
	}
}

func TestDecodeRefuses(t *testing.T) {
	scope := key.Scope("list_files", "acme", "web", args{Path: "src"})
	valid := scope.Encode(12, "a.go")
	raw, _ := base64.RawURLEncoding.DecodeString(valid)
	flipped := append([]byte(nil), raw...)
	flipped[0] ^= 1
	for name, c := range map[string]string{
		"not base64":            "not a cursor!",
		"padded":                valid + "=",
		"standard alphabet":     strings.NewReplacer("-", "+", "_", "/").Replace(valid) + "+/",
		"a character more":      valid + "A",
		"a character less":      valid[:len(valid)-1],
		"upper case":            strings.ToUpper(valid),
		"a byte changed":        base64.RawURLEncoding.EncodeToString(flipped),
		"too short for a tag":   base64.RawURLEncoding.EncodeToString(raw[:10]),
		"the old, unkeyed form": base64.RawURLEncoding.EncodeToString([]byte("list_files:a.go")),
		"too long":              strings.Repeat("A", cursor.MaxLen+1),
		"another kind":          key.Scope("find_symbols", "acme", "web", args{Path: "src"}).Encode(12, "a.go"),
		"another tenant":        key.Scope("list_files", "other", "web", args{Path: "src"}).Encode(12, "a.go"),
		"another repository":    key.Scope("list_files", "acme", "api", args{Path: "src"}).Encode(12, "a.go"),
		"other arguments":       key.Scope("list_files", "acme", "web", args{Path: "src", Globs: []string{"*.go"}}).Encode(12, "a.go"),
		"another key":           mustKey(strings.Repeat("x", 40)).Scope("list_files", "acme", "web", args{Path: "src"}).Encode(12, "a.go"),
		"other fields":          scope.Encode(12),
		"more fields":           scope.Encode(12, "a.go", 3),
		"a string for a number": scope.Encode("12", "a.go"),
	} {
		n, path := -1, "kept"
		err := scope.Decode(c, &n, &path)
		te, ok := err.(*toolerr.Error)
		if !ok || te.Code != toolerr.InvalidInput || !strings.HasPrefix(te.Message, "cursor: ") {
			t.Errorf("%s: Decode(%q) = %v, want INVALID_INPUT naming cursor", name, c, err)
		}
		if n != -1 || path != "kept" {
			t.Errorf("%s: a refused cursor set the fields to %d, %q", name, n, path)
		}
	}
	// A number beyond int64 (only a forger could make one: here, its key).
	var id int64
	if err := scope.Decode(scope.Encode(int64(math.MaxInt64)), &id); err != nil || id != math.MaxInt64 {
		t.Errorf("MaxInt64: %d, %v", id, err)
	}
}

func TestKeys(t *testing.T) {
	if _, err := cursor.NewKey([]byte("short")); err == nil {
		t.Error("a 5-byte key was accepted")
	}
	a, b := cursor.RandomKey(), cursor.RandomKey()
	c := a.Scope("k", "t", "", args{}).Encode(1)
	var n int
	if err := b.Scope("k", "t", "", args{}).Decode(c, &n); err == nil {
		t.Error("two random keys accept each other's cursors")
	}
	defer func() {
		if recover() == nil {
			t.Error("a zero Key made a scope")
		}
	}()
	cursor.Key{}.Scope("k", "t", "", args{})
}

// FuzzDecode: whatever a client sends as a cursor, Decode answers without
// panicking, and accepts only what Encode made in the scope: decoding it
// and encoding the fields again gives the cursor back.
func FuzzDecode(f *testing.F) {
	scope := key.Scope("find_references", "acme", "web", args{Path: "src"})
	for _, seed := range []string{
		"", "A", "AAAA", "not-a-cursor", "bm90LWEtY3Vyc29y",
		base64.RawURLEncoding.EncodeToString([]byte("find_references:9223372036854775807")),
		base64.RawURLEncoding.EncodeToString([]byte("find_references:1000000000")),
		scope.Encode("a/b.go", 12, 0), scope.Encode("", 0, math.MaxInt), scope.Encode(strings.Repeat("x", 300), 1, 1),
		key.Scope("list_files", "acme", "web", args{Path: "src"}).Encode("a/b.go", 12, 0),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, c string) {
		var path string
		var line, skipped int
		if err := scope.Decode(c, &path, &line, &skipped); err != nil {
			if te, ok := err.(*toolerr.Error); !ok || te.Code != toolerr.InvalidInput {
				t.Fatalf("Decode(%q) = %v, want INVALID_INPUT", c, err)
			}
			return
		}
		if c != "" && scope.Encode(path, line, skipped) != c {
			t.Fatalf("Decode accepted %q, which Encode does not make", c)
		}
	})
}
