package memory

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// The pipeline's schema refuses most of these before a handler runs;
// entryText checks again, so a looser contract cannot let them through.
func TestEntryText(t *testing.T) {
	content := func(s string) *string { return &s }
	ts := `"timestamp":"2025-01-15T10:00:00Z"`
	tests := []struct {
		name  string
		in    writeInput
		want  string
		field string // "" when valid
	}{
		{"jsonl", writeInput{File: "decisions.jsonl", Entry: json.RawMessage(" {\n" + ts + ", \"a\" : [1, 2]\n} ")},
			`{` + ts + `,"a":[1,2]}`, ""},
		{"markdown", writeInput{File: "best_practices.md", Content: content("x \n\n")}, "x\n", ""},
		{"unknown file", writeInput{File: "notes.md", Content: content("x")}, "", "file"},
		{"empty file", writeInput{File: "", Entry: json.RawMessage(`{` + ts + `}`)}, "", "file"},
		{"jsonl with content", writeInput{File: "decisions.jsonl", Entry: json.RawMessage(`{` + ts + `}`), Content: content("x")}, "", "content"},
		{"jsonl without entry", writeInput{File: "decisions.jsonl"}, "", "entry"},
		{"entry null", writeInput{File: "decisions.jsonl", Entry: json.RawMessage(`null`)}, "", "entry"},
		{"entry array", writeInput{File: "decisions.jsonl", Entry: json.RawMessage(`[{` + ts + `}]`)}, "", "entry"},
		{"entry string", writeInput{File: "decisions.jsonl", Entry: json.RawMessage(`"x"`)}, "", "entry"},
		{"no timestamp", writeInput{File: "decisions.jsonl", Entry: json.RawMessage(`{"event":"x"}`)}, "", "entry.timestamp"},
		{"timestamp number", writeInput{File: "decisions.jsonl", Entry: json.RawMessage(`{"timestamp":1}`)}, "", "entry.timestamp"},
		{"timestamp null", writeInput{File: "decisions.jsonl", Entry: json.RawMessage(`{"timestamp":null}`)}, "", "entry.timestamp"},
		{"timestamp bad", writeInput{File: "decisions.jsonl", Entry: json.RawMessage(`{"timestamp":"2025-01-15"}`)}, "", "entry.timestamp"},
		{"timestamp lower-case t and z", writeInput{File: "decisions.jsonl", Entry: json.RawMessage(`{"timestamp":"2025-01-15t10:00:00z"}`)},
			`{"timestamp":"2025-01-15t10:00:00z"}`, ""},
		{"timestamp leap second", writeInput{File: "decisions.jsonl", Entry: json.RawMessage(`{"timestamp":"2016-12-31T23:59:60Z"}`)},
			`{"timestamp":"2016-12-31T23:59:60Z"}`, ""},
		{"timestamp leap second not at 23:59 UTC", writeInput{File: "decisions.jsonl", Entry: json.RawMessage(`{"timestamp":"2016-12-31T10:00:60Z"}`)}, "", "entry.timestamp"},
		{"invalid UTF-8", writeInput{File: "decisions.jsonl", Entry: json.RawMessage("{" + ts + ",\"x\":\"\xff\"}")}, "", "entry"},
		{"markdown with entry", writeInput{File: "best_practices.md", Entry: json.RawMessage(`{` + ts + `}`), Content: content("x")}, "", "entry"},
		{"markdown without content", writeInput{File: "best_practices.md"}, "", "content"},
		{"markdown whitespace", writeInput{File: "best_practices.md", Content: content("\v\u00a0\n")}, "", "content"},
	}
	for _, tc := range tests {
		got, err := entryText(tc.in)
		if tc.field == "" {
			if err != nil || got != tc.want {
				t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
			}
			continue
		}
		te, ok := err.(*toolerr.Error)
		if !ok || te.Code != toolerr.InvalidInput || !strings.HasPrefix(te.Message, tc.field+": ") {
			t.Errorf("%s: got %q, %v; want INVALID_INPUT naming %s", tc.name, got, err, tc.field)
		}
	}
}
