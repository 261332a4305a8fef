// Package schema loads the tool contracts in contracts/, compiles their JSON
// Schemas once and validates tool input and output against them. Validation
// errors become INVALID_INPUT with a message that names the offending field.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// DefaultMaxInputBytes bounds a tool's arguments unless its contract says
// otherwise: no tool needs more, and decoding and validating JSON costs a
// multiple of its size in memory.
const DefaultMaxInputBytes = 64 << 10

// Contract is one tool's contract, as in contracts/<tool>.json.
type Contract struct {
	Name         string          `json:"name"`
	Aliases      []string        `json:"aliases,omitempty"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  Annotations     `json:"annotations"`
	RateLimit    RateLimit       `json:"rateLimit"`
	TimeoutMs    int             `json:"timeoutMs"`
	// MaxInputBytes bounds the arguments' JSON; 0 means DefaultMaxInputBytes.
	MaxInputBytes int       `json:"maxInputBytes,omitempty"`
	Examples      []Example `json:"examples"`

	// The schemas are compiled on first use (Compile), so that a process
	// starts without compiling contracts it may never serve.
	compileOnce   sync.Once
	input, output *jsonschema.Schema
	compileErr    error

	defaults map[string]json.RawMessage // top-level property defaults
	trimmed  []string                   // top-level string properties marked "x-trim"
}

// Annotations are the MCP tool hints; every contract states all four.
type Annotations struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	DestructiveHint bool `json:"destructiveHint"`
	IdempotentHint  bool `json:"idempotentHint"`
	OpenWorldHint   bool `json:"openWorldHint"`
}

// RateLimit is the default per-tenant limit for the tool.
type RateLimit struct {
	RequestsPerMinute int `json:"requestsPerMinute"`
}

// Example is an input with the result or error code it must produce. Output,
// when present, must be contained in the tool's result (every key given has
// that value, recursively). Setup calls run first, in order, for tools that
// need state. An INVALID_INPUT example is rejected by the input schema
// unless CheckedBy is "tool" (the schema accepts it; the tool refuses it).
// An Internet example reaches the public internet: where the internet
// cannot be reached, it must fail with UPSTREAM_ERROR instead. An
// EmptyRepository example runs for a tenant whose repository has no files;
// a HistoryRepository one over a repository with a git history.
type Example struct {
	Name  string `json:"name"`
	Setup []Call `json:"setup,omitempty"`
	// Bind takes input fields from what the setup calls answered: a field
	// name → a JSON pointer into the list of their results ("/0/id": the
	// id the first setup call answered). Input holds the value a fresh
	// tenant gets, as the specification shows it; BoundInput is the input for any
	// tenant (a smoke test's, which has tasks already).
	Bind      map[string]string `json:"bind,omitempty"`
	Input     json.RawMessage   `json:"input"`
	Output    json.RawMessage   `json:"output,omitempty"`
	Error     toolerr.Code      `json:"error,omitempty"`
	CheckedBy string            `json:"checkedBy,omitempty"`
	Internet  bool              `json:"internet,omitempty"`
	// EmptyRepository runs the example over a repository with no files.
	EmptyRepository bool `json:"emptyRepository,omitempty"`
	// HistoryRepository runs the example over a git repository with a
	// known history (the tests' repotest.GitHistory), not the example
	// repository, which has none.
	HistoryRepository bool `json:"historyRepository,omitempty"`
}

// SchemaRejects reports whether the input schema alone must refuse the
// example's input.
func (e Example) SchemaRejects() bool {
	return e.Error == toolerr.InvalidInput && e.CheckedBy != "tool"
}

// BoundInput is the example's input with its Bind fields taken from the
// setup calls' results, in the order of Setup.
func (e Example) BoundInput(setupResults []json.RawMessage) (json.RawMessage, error) {
	if len(e.Bind) == 0 {
		return e.Input, nil
	}
	var input map[string]json.RawMessage
	if err := json.Unmarshal(e.Input, &input); err != nil {
		return nil, fmt.Errorf("example %q: bind needs an object input: %w", e.Name, err)
	}
	results, err := json.Marshal(setupResults)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(results, &doc); err != nil {
		return nil, err
	}
	for field, pointer := range e.Bind {
		v, ok := lookup(doc, pointer)
		if !ok {
			return nil, fmt.Errorf("example %q: bind %s: the setup results have nothing at %s", e.Name, field, pointer)
		}
		if input[field], err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	return json.Marshal(input)
}

// lookup follows a JSON pointer ("/0/id"; "" is doc itself) into doc.
func lookup(doc any, pointer string) (any, bool) {
	if pointer == "" {
		return doc, doc != nil
	}
	for _, p := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		p = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		switch n := doc.(type) {
		case map[string]any:
			doc = n[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(n) {
				return nil, false
			}
			doc = n[i]
		default:
			return nil, false
		}
	}
	return doc, doc != nil
}

// Call is a tool invocation used by an example's setup.
type Call struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// Set is every contract in contracts/, by name.
type Set struct {
	byName map[string]*Contract
	names  []string // sorted
}

// Load parses and compiles every <tool>.json in fsys (errors.json aside).
func Load(fsys fs.FS) (*Set, error) {
	files, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return nil, err
	}
	s := &Set{byName: map[string]*Contract{}}
	for _, f := range files {
		if f == "errors.json" {
			continue
		}
		raw, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		c, err := Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("contract %s: %w", f, err)
		}
		if want := strings.TrimSuffix(path.Base(f), ".json"); c.Name != want {
			return nil, fmt.Errorf("contract %s: name %q does not match the file name", f, c.Name)
		}
		for _, n := range append([]string{c.Name}, c.Aliases...) {
			if _, dup := s.byName[n]; dup {
				return nil, fmt.Errorf("contract %s: name %q is used twice", f, n)
			}
			s.byName[n] = c
		}
		s.names = append(s.names, c.Name)
	}
	slices.Sort(s.names)
	return s, nil
}

// Parse decodes one contract and compiles its schemas.
func Parse(raw []byte) (*Contract, error) {
	var c Contract
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, err
	}
	switch {
	case c.Name == "":
		return nil, fmt.Errorf("name is empty")
	case c.Description == "":
		return nil, fmt.Errorf("description is empty")
	case c.TimeoutMs <= 0:
		return nil, fmt.Errorf("timeoutMs must be positive")
	case c.RateLimit.RequestsPerMinute <= 0:
		return nil, fmt.Errorf("rateLimit.requestsPerMinute must be positive")
	case c.MaxInputBytes < 0:
		return nil, fmt.Errorf("maxInputBytes must not be negative")
	}
	if c.MaxInputBytes == 0 {
		c.MaxInputBytes = DefaultMaxInputBytes
	}
	var err error
	if err := objectSchema(c.OutputSchema); err != nil {
		return nil, fmt.Errorf("outputSchema: %w", err)
	}
	if err := objectSchema(c.InputSchema); err != nil {
		return nil, fmt.Errorf("inputSchema: %w", err)
	}
	if c.defaults, c.trimmed, err = topLevelKeywords(c.InputSchema); err != nil {
		return nil, fmt.Errorf("inputSchema: %w", err)
	}
	return &c, nil
}

// Compile compiles the contract's input and output schemas, once; later
// calls return the first result.
func (c *Contract) Compile() error {
	c.compileOnce.Do(func() {
		var err error
		if c.input, err = compile(c.Name+"/input", c.InputSchema); err != nil {
			c.compileErr = fmt.Errorf("contract %s: inputSchema: %w", c.Name, err)
			return
		}
		if c.output, err = compile(c.Name+"/output", c.OutputSchema); err != nil {
			c.compileErr = fmt.Errorf("contract %s: outputSchema: %w", c.Name, err)
		}
	})
	return c.compileErr
}

// objectSchema checks that a schema describes a JSON object.
func objectSchema(raw json.RawMessage) error {
	var top struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return err
	}
	if top.Type != "object" {
		return fmt.Errorf(`must have "type": "object"`)
	}
	return nil
}

func compile(url string, raw json.RawMessage) (*jsonschema.Schema, error) {
	comp := jsonschema.NewCompiler()
	comp.Draft = jsonschema.Draft2020
	comp.AssertFormat = true
	if err := comp.AddResource(url, bytes.NewReader(raw)); err != nil {
		return nil, err
	}
	return comp.Compile(url)
}

// topLevelKeywords reads the top-level properties' defaults and which of
// them carry "x-trim": true (Toolshed's keyword: leading and trailing
// Unicode whitespace is removed before validation, so length limits and
// minLength apply to the trimmed text).
func topLevelKeywords(raw json.RawMessage) (map[string]json.RawMessage, []string, error) {
	var s struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
			Trim    bool            `json:"x-trim"`
			Type    any             `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, nil, err
	}
	d := map[string]json.RawMessage{}
	var trimmed []string
	for name, p := range s.Properties {
		if p.Default != nil {
			d[name] = p.Default
		}
		if p.Trim {
			if p.Type != "string" && !slices.Contains(asStrings(p.Type), "string") {
				return nil, nil, fmt.Errorf("property %s: x-trim needs a string type", name)
			}
			trimmed = append(trimmed, name)
		}
	}
	slices.Sort(trimmed)
	return d, trimmed, nil
}

func asStrings(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Compile compiles every contract's schemas (tests, and servers that want
// to pay for it before the first call).
func (s *Set) Compile() error {
	var errs []error
	for _, n := range s.names {
		errs = append(errs, s.byName[n].Compile())
	}
	return errors.Join(errs...)
}

// Names returns the canonical tool names, sorted.
func (s *Set) Names() []string { return slices.Clone(s.names) }

// Get returns the contract for a tool name or alias.
func (s *Set) Get(name string) (*Contract, bool) {
	c, ok := s.byName[name]
	return c, ok
}

// PrepareInput validates raw tool arguments against the input schema and
// returns them with the schema's top-level defaults filled in. A nil or empty
// raw is treated as {}. Failures are INVALID_INPUT naming the field.
func (c *Contract) PrepareInput(raw json.RawMessage) (json.RawMessage, error) {
	if err := c.Compile(); err != nil {
		return nil, err
	}
	if len(raw) > c.MaxInputBytes {
		return nil, toolerr.New(toolerr.SizeLimitExceeded, "arguments are %d bytes; %s accepts at most %d", len(raw), c.Name, c.MaxInputBytes).
			With("limitBytes", c.MaxInputBytes).With("bytes", len(raw))
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	v, err := Decode(raw)
	if err != nil {
		return nil, toolerr.New(toolerr.InvalidInput, "arguments are not valid JSON: %v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, toolerr.New(toolerr.InvalidInput, "arguments must be a JSON object")
	}
	if field, bad := outOfRange(obj, "arguments"); bad {
		return nil, toolerr.New(toolerr.InvalidInput, "%s: number is out of range", field)
	}
	changed := false
	for _, k := range c.trimmed {
		if s, ok := obj[k].(string); ok {
			if t := strings.TrimSpace(s); t != s {
				obj[k] = t
				changed = true
			}
		}
	}
	if err := c.input.Validate(obj); err != nil {
		return nil, invalidInput(err, c.InputSchema)
	}
	for k, d := range c.defaults {
		if _, ok := obj[k]; !ok {
			obj[k] = d
			changed = true
		}
	}
	if !changed {
		return raw, nil
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("re-encode arguments: %w", err)
	}
	return out, nil
}

// ValidateOutput checks a tool's result against the output schema. A failure
// is a bug in the tool, so it is returned as a plain error (INTERNAL_ERROR).
func (c *Contract) ValidateOutput(result json.RawMessage) error {
	if err := c.Compile(); err != nil {
		return err
	}
	// The result is our own json.Marshal output: a plain decode is enough
	// (the strict one, with its duplicate-key walk, is for callers' JSON).
	dec := json.NewDecoder(bytes.NewReader(result))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("tool %s produced invalid JSON: %w", c.Name, err)
	}
	if err := c.output.Validate(v); err != nil {
		return fmt.Errorf("tool %s result does not match its outputSchema: %w", c.Name, err)
	}
	return nil
}

// maxNumberLen bounds how a number may be written: validating a number
// with a million digits costs seconds of CPU.
const maxNumberLen = 100

// outOfRange finds a number too large for a float64 (e.g. 1e400), which
// JSON allows but no tool can decode, or one written with absurdly many
// digits.
func outOfRange(v any, path string) (string, bool) {
	switch v := v.(type) {
	case json.Number:
		if len(v) > maxNumberLen {
			return path, true
		}
		f, err := v.Float64()
		return path, err != nil || math.IsInf(f, 0)
	case map[string]any:
		for k, e := range v {
			if p, bad := outOfRange(e, join(path, k)); bad {
				return p, true
			}
		}
	case []any:
		for i, e := range v {
			if p, bad := outOfRange(e, fmt.Sprintf("%s[%d]", path, i)); bad {
				return p, true
			}
		}
	}
	return "", false
}

// IsDateTime reports whether s is a "date-time" as the contracts' schemas
// check it (RFC 3339 §5.6, with a lower-case "t" and "z" and a leap second
// only at 23:59:60 UTC), for handlers that check a timestamp the schema
// cannot reach, so that the two never disagree.
func IsDateTime(s string) bool { return jsonschema.Formats["date-time"](s) }
