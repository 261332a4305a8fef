package schema_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// allTools are the 14 tools the seeds define, plus our additions.
var allTools = []string{
	"add_task", "blame", "compare", "complete_task", "context_search", "delete_task", "file-io", "find_callers", "find_definition",
	"find_implementations", "find_references", "find_symbols", "get_commit", "grep_codebase", "hello", "list_commits", "list_files",
	"list_refs", "list_repos", "list_tasks", "read_file", "read_memory", "read_repo_file", "search_commits", "sys-audit",
	"update_task", "web-fetch", "write_memory_entry",
}

func load(t *testing.T) *schema.Set {
	t.Helper()
	set, err := schema.Load(contracts.FS)
	if err != nil {
		t.Fatalf("load contracts: %v", err)
	}
	if err := set.Compile(); err != nil {
		t.Fatalf("compile contracts: %v", err)
	}
	return set
}

func TestEveryToolHasAContract(t *testing.T) {
	set := load(t)
	got := strings.Join(set.Names(), ",")
	if want := strings.Join(allTools, ","); got != want {
		t.Errorf("contracts:\n got %s\nwant %s", got, want)
	}
}

// TestContractExamples checks every example's input against its schema:
// success examples and tool-checked errors must pass, schema errors must
// fail with INVALID_INPUT naming a field.
func TestContractExamples(t *testing.T) {
	set := load(t)
	for _, name := range set.Names() {
		c, _ := set.Get(name)
		if len(c.Examples) == 0 {
			t.Errorf("%s: no examples", name)
		}
		for _, ex := range c.Examples {
			t.Run(name+"/"+ex.Name, func(t *testing.T) {
				if ex.Error != "" {
					if _, err := toolerr.Vocabulary(); err != nil {
						t.Fatal(err)
					}
					if _, ok := mustVocab(t)[ex.Error]; !ok {
						t.Fatalf("example error %q is not in errors.json", ex.Error)
					}
				}
				for _, s := range ex.Setup {
					if _, ok := set.Get(s.Tool); !ok {
						t.Fatalf("setup calls unknown tool %q", s.Tool)
					}
				}
				_, err := c.PrepareInput(ex.Input)
				if ex.SchemaRejects() {
					var te *toolerr.Error
					if !errors.As(err, &te) || te.Code != toolerr.InvalidInput {
						t.Fatalf("input %s: want INVALID_INPUT, got %v", ex.Input, err)
					}
					if te.Message == "" || te.Details["errors"] == nil {
						t.Errorf("INVALID_INPUT without field details: %+v", te)
					}
					return
				}
				if err != nil {
					t.Fatalf("input %s should pass the schema: %v", ex.Input, err)
				}
			})
		}
	}
}

func mustVocab(t *testing.T) map[toolerr.Code]toolerr.Info {
	t.Helper()
	v, err := toolerr.Vocabulary()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestAnnotationsAndLimits(t *testing.T) {
	set := load(t)
	for _, name := range set.Names() {
		c, _ := set.Get(name)
		if c.Annotations.ReadOnlyHint && c.Annotations.DestructiveHint {
			t.Errorf("%s: read-only and destructive at once", name)
		}
		if c.TimeoutMs > 30000 {
			t.Errorf("%s: timeout %d ms exceeds the gateway's 30 s", name, c.TimeoutMs)
		}
		if c.Title == "" {
			t.Errorf("%s: no title", name)
		}
	}
}

func TestFieldMessages(t *testing.T) {
	set := load(t)
	hello, _ := set.Get("hello")
	tests := []struct {
		in        string
		wantField string
		wantText  string
	}{
		{`{}`, "name", "name: is required"},
		{`{"name":""}`, "name", "name: must not be empty or only whitespace"},
		{`{"name":"` + strings.Repeat("x", 101) + `"}`, "name", "name: must be at most 100 characters"},
		{`{"name":42}`, "name", "name: must be of type string"},
		{`{"name":"  "}`, "name", "name: must not be empty or only whitespace"},
		{`{"name":"a","x":1}`, "x", "x: is not an accepted field"},
		{`[1]`, "arguments", "arguments must be a JSON object"},
		{`{"name":"a"} trailing`, "", "arguments are not valid JSON"},
		{`{"name":"\u3000"}`, "name", "name: must not be empty or only whitespace"},
		{`{"name":"\u00a0 \t"}`, "name", "name: must not be empty or only whitespace"},
		{`{"name":"  ` + strings.Repeat("x", 101) + `  "}`, "name", "name: must be at most 100 characters long, got 101"},
		{`{"name":"a","name":"b"}`, "", `arguments are not valid JSON: duplicate key "name" in the object`},
		{`{"name":"a","x":{"k":1,"k":2}}`, "", `arguments are not valid JSON: duplicate key "k" in x`},
		{`{"name":"a","x":[{"k":1},{"k":1,"k":2}]}`, "", `arguments are not valid JSON: duplicate key "k" in x[1]`},
		{`{"name":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, "", "arguments are not valid JSON: JSON nested deeper than 64 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.in[:min(len(tt.in), 20)], func(t *testing.T) {
			_, err := hello.PrepareInput(json.RawMessage(tt.in))
			var te *toolerr.Error
			if !errors.As(err, &te) || te.Code != toolerr.InvalidInput {
				t.Fatalf("got %v, want INVALID_INPUT", err)
			}
			if !strings.HasPrefix(te.Message, tt.wantText) {
				t.Errorf("message %q, want prefix %q", te.Message, tt.wantText)
			}
		})
	}
}

// TestContractsWordFailures: a keyword whose failure the contract words
// ("x-error": {"<keyword>": "..."} next to it) fails with those words,
// never as the regular expression or the anyOf's branches, also through a
// $ref; every pattern of every contract has words, and every x-error names
// keywords of its own schema object.
func TestContractsWordFailures(t *testing.T) {
	set := load(t)
	tests := []struct{ tool, args, want string }{
		{"read_file", `{"path":"../../etc/passwd"}`, "path: must be a relative path inside the repository"},
		{"read_file", `{"path":"src\\index.ts"}`, "path: must not contain backslashes or control characters"},
		{"read_repo_file", `{"path":"docs/my notes.md"}`, "path: may only hold letters, digits"},
		{"write_memory_entry", `{"file":"best_practices.md","content":"   "}`, "content: must not be empty or only whitespace"},
		{"update_task", `{"task_id":1}`, "arguments: give a title or a description (or both) to change"},
	}
	for _, tt := range tests {
		c, _ := set.Get(tt.tool)
		_, err := c.PrepareInput(json.RawMessage(tt.args))
		if err == nil || !strings.HasPrefix(err.Error(), "INVALID_INPUT: "+tt.want) || strings.Contains(err.Error(), "^") ||
			strings.Contains(err.Error(), "more problem") {
			t.Errorf("%s %s: %v, want %q", tt.tool, tt.args, err, tt.want)
		}
	}
	for _, name := range set.Names() {
		c, _ := set.Get(name)
		var schema any
		if err := json.Unmarshal(c.InputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		checkWords(t, name, schema)
	}
}

// TestWordsThroughRef: the words of a keyword in $defs apply where a $ref
// leads to it.
func TestWordsThroughRef(t *testing.T) {
	doc := `{"name":"t","title":"T","description":"d","timeoutMs":1,"rateLimit":{"requestsPerMinute":1},
		"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false},
		"outputSchema":{"type":"object"},"examples":[],
		"inputSchema":{"type":"object","properties":{"id":{"$ref":"#/$defs/id"}},
			"$defs":{"id":{"type":"string","pattern":"^[a-z]+$","x-error":{"pattern":"must be lower-case letters"}}}}}`
	c, err := schema.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.PrepareInput(json.RawMessage(`{"id":"A1"}`))
	if want := "INVALID_INPUT: id: must be lower-case letters"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// checkWords fails the test for a pattern without words, or an x-error that
// is not an object of words for keywords of its own schema object.
func checkWords(t *testing.T, tool string, node any) {
	t.Helper()
	switch n := node.(type) {
	case map[string]any:
		words, hasWords := n["x-error"].(map[string]any)
		if _, ok := n["x-error"]; ok && !hasWords {
			t.Errorf("%s: x-error must be an object of keyword: words, got %v", tool, n["x-error"])
		}
		for k, v := range words {
			if s, _ := v.(string); s == "" || n[k] == nil {
				t.Errorf("%s: x-error %q: %v, for a keyword that is not beside it", tool, k, v)
			}
		}
		if _, ok := n["pattern"].(string); ok && words["pattern"] == nil {
			t.Errorf("%s: a pattern without words (x-error): %v", tool, n["pattern"])
		}
		for k, v := range n {
			if k != "examples" && k != "x-error" {
				checkWords(t, tool, v)
			}
		}
	case []any:
		for _, v := range n {
			checkWords(t, tool, v)
		}
	}
}

// TestTrimmedFields: "x-trim" properties reach the tool trimmed, and length
// limits count the trimmed text.
func TestTrimmedFields(t *testing.T) {
	hello, _ := load(t).Get("hello")
	tests := []struct{ in, want string }{
		{`{"name":"  Ada\u3000"}`, `{"name":"Ada"}`},
		{`{"name":"\u00a0` + strings.Repeat("x", 100) + `\n"}`, `{"name":"` + strings.Repeat("x", 100) + `"}`},
		{`{"name":"Ada"}`, `{"name":"Ada"}`},
	}
	for _, tt := range tests {
		got, err := hello.PrepareInput(json.RawMessage(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: got %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	bad := fstest.MapFS{"t.json": {Data: []byte(`{"name":"t","title":"T","description":"d",
		"inputSchema":{"type":"object","properties":{"n":{"type":"integer","x-trim":true}}},
		"outputSchema":{"type":"object"},
		"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false},
		"rateLimit":{"requestsPerMinute":1},"timeoutMs":1,"examples":[]}`)}}
	if _, err := schema.Load(bad); err == nil || !strings.Contains(err.Error(), "x-trim needs a string type") {
		t.Errorf("x-trim on an integer: %v", err)
	}
}

func TestDefaultsAreFilled(t *testing.T) {
	fsys := fstest.MapFS{"t.json": {Data: []byte(`{
		"name":"t","title":"T","description":"d","timeoutMs":1,"rateLimit":{"requestsPerMinute":1},
		"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false},
		"inputSchema":{"type":"object","properties":{"limit":{"type":"integer","default":5},"q":{"type":"string"}}},
		"outputSchema":{"type":"object"},"examples":[]}`)}}
	set, err := schema.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := set.Get("t")
	for in, want := range map[string]string{
		`{"q":"a"}`:   `{"limit":5,"q":"a"}`,
		`{"limit":2}`: `{"limit":2}`,
		``:            `{"limit":5}`,
	} {
		got, err := c.PrepareInput(json.RawMessage(in))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("PrepareInput(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestLoadRejectsBadContracts(t *testing.T) {
	base := `"title":"T","description":"d","timeoutMs":1,"rateLimit":{"requestsPerMinute":1},"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false},"outputSchema":{"type":"object"},"examples":[]`
	tests := map[string]string{
		"name mismatch": `{"name":"other",` + base + `,"inputSchema":{"type":"object"}}`,
		"not an object": `{"name":"t",` + base + `,"inputSchema":{"type":"string"}}`,
		"bad schema":    `{"name":"t",` + base + `,"inputSchema":{"type":"object","properties":{"a":{"minLength":"x"}}}}`,
		"unknown key":   `{"name":"t","extra":1,` + base + `,"inputSchema":{"type":"object"}}`,
	}
	for name, doc := range tests {
		t.Run(name, func(t *testing.T) {
			set, err := schema.Load(fstest.MapFS{"t.json": {Data: []byte(doc)}})
			if err == nil {
				err = set.Compile()
			}
			if err == nil {
				t.Error("Load and Compile accepted a bad contract")
			}
		})
	}
}

// FuzzPrepareInput: no input may panic the validator, and whatever it
// accepts must be a JSON object.
func FuzzPrepareInput(f *testing.F) {
	set, err := schema.Load(contracts.FS)
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range set.Names() {
		c, _ := set.Get(name)
		for _, ex := range c.Examples {
			f.Add(name, string(ex.Input))
		}
	}
	f.Add("hello", `{"name":"\u0000"}`)
	f.Add("sys-audit", `{"command":"diff_baseline","baseline":{"cpu":{"cores":1e400}}}`)
	f.Fuzz(func(t *testing.T, tool, input string) {
		c, ok := set.Get(tool)
		if !ok {
			return
		}
		out, err := c.PrepareInput(json.RawMessage(input))
		if err != nil {
			var te *toolerr.Error
			if !errors.As(err, &te) || te.Code != toolerr.InvalidInput || te.Message == "" {
				t.Fatalf("%s %q: error %v is not INVALID_INPUT", tool, input, err)
			}
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(out, &obj); err != nil {
			t.Fatalf("%s %q: accepted input is not an object: %s", tool, input, out)
		}
	})
}

func TestHugeNumbersRejected(t *testing.T) {
	set := load(t)
	c, _ := set.Get("hello")
	for _, in := range []string{`{"name":"a","x":1e400}`, `{"name":"a","x":1.` + strings.Repeat("0", 10000) + `}`} {
		_, err := c.PrepareInput(json.RawMessage(in))
		var te *toolerr.Error
		if !errors.As(err, &te) || te.Code != toolerr.InvalidInput || te.Message != "x: number is out of range" {
			t.Errorf("%.30s: got %v", in, err)
		}
	}
}

// FuzzDecode: the strict decoder never panics, and whatever it accepts is
// JSON that encoding/json reads to the same value.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":1,"a":2}`, `[[[[]]]]`, `{"a":{"b":[1,{"c":null}]}}`, `1e400`, `"\ud800"`, `{} {}`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		v, err := schema.Decode([]byte(in))
		if err != nil {
			return
		}
		var want any
		dec := json.NewDecoder(strings.NewReader(in))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("Decode accepted %q, encoding/json refuses it: %v", in, err)
		}
		got, _ := json.Marshal(v)
		w, _ := json.Marshal(want)
		if string(got) != string(w) {
			t.Fatalf("%q: Decode gave %s, encoding/json %s", in, got, w)
		}
	})
}
