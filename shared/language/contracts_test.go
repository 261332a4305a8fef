package language_test

import (
	"encoding/json"
	"io/fs"
	"slices"
	"testing"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/language"
)

// TestContractLanguages checks every contract that lists languages (a
// "language" property with an enum, anywhere in its schemas) against the
// table: find_symbols' input lists exactly the languages a parser reads,
// in the table's order; any other list names languages of the table only.
func TestContractLanguages(t *testing.T) {
	names, err := fs.Glob(contracts.FS, "*.json")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, name := range names {
		raw, err := fs.ReadFile(contracts.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, enum := range languageEnums(doc) {
			found++
			if name == "find_symbols.json" {
				if want := language.WithParser(); !slices.Equal(enum, want) {
					t.Errorf("%s: language enum %v, want the languages with a parser %v", name, enum, want)
				}
				continue
			}
			for _, l := range enum {
				if !language.Known(l) {
					t.Errorf("%s: language %q is not in shared/language's table", name, l)
				}
			}
		}
	}
	if found == 0 {
		t.Error("no contract lists languages; find_symbols' input does")
	}
}

// languageEnums returns the enums of the properties named language in a
// decoded JSON document, at any depth.
func languageEnums(v any) [][]string {
	var out [][]string
	switch v := v.(type) {
	case map[string]any:
		if props, ok := v["properties"].(map[string]any); ok {
			if l, ok := props["language"].(map[string]any); ok {
				if enum, ok := l["enum"].([]any); ok {
					var names []string
					for _, e := range enum {
						s, _ := e.(string)
						names = append(names, s)
					}
					out = append(out, names)
				}
			}
		}
		for _, child := range v {
			out = append(out, languageEnums(child)...)
		}
	case []any:
		for _, child := range v {
			out = append(out, languageEnums(child)...)
		}
	}
	return out
}
