package sysaudit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// Bounds of a diff, so that its size does not grow with a hostile baseline
// beyond a small multiple of the baseline itself.
const (
	// MaxChanges is how many entries each change list shows.
	MaxChanges = 200
	// maxValueRunes is where string values in a change are cut.
	maxValueRunes = 1000
)

// Diff is the result of diff_baseline.
type Diff struct {
	Kind    string  `json:"kind"` // "hardware" or "software"
	Changes Changes `json:"changes"`
	// Truncated holds the full counts when a list was cut to MaxChanges.
	Truncated *Counts `json:"truncated,omitempty"`
}

// Counts are the numbers of changes of each kind.
type Counts struct {
	Added    int `json:"added"`
	Removed  int `json:"removed"`
	Modified int `json:"modified"`
}

// Changes lists what differs between the baseline and now, each list sorted
// by path and never nil.
type Changes struct {
	Added    []Entry        `json:"added"`
	Removed  []Entry        `json:"removed"`
	Modified []Modification `json:"modified"`
}

// Entry is a leaf value present on one side only.
type Entry struct {
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// Modification is a leaf present on both sides with different values.
type Modification struct {
	Path string `json:"path"`
	From any    `json:"from"`
	To   any    `json:"to"`
}

// The kinds of baseline.
const (
	kindHardware = "hardware"
	kindSoftware = "software"
)

// Top-level keys that tell which command produced a baseline.
var (
	hardwareKeys = []string{"cpu", "ram_gb"}
	softwareKeys = []string{"os_version", "kernel", "packages"}
)

// diffBaseline compares a previous output with the current output of the
// same command.
func (a *auditor) diffBaseline(ctx context.Context, raw json.RawMessage) (Diff, error) {
	baseline, err := decodeObject(raw)
	if err != nil {
		return Diff{}, toolerr.Field("baseline", "%s", "must be a JSON object")
	}
	kind := baselineKind(baseline)
	if kind == "" {
		return Diff{}, toolerr.Field("baseline", "%s", "must be an output of list_hardware or list_software").
			With("expectedOneOf", append(slices.Clone(hardwareKeys), softwareKeys...)).
			With("gotKeys", firstKeys(baseline, 20))
	}

	current, err := a.currentOutput(ctx, kind)
	if err != nil {
		return Diff{}, err
	}
	changes := compareLeaves(leaves(baseline), leaves(current))
	return bounded(Diff{Kind: kind, Changes: changes}), nil
}

// bounded cuts each change list to MaxChanges and long strings to
// maxValueRunes, recording the full counts when anything was cut.
func bounded(d Diff) Diff {
	c := &d.Changes
	full := Counts{Added: len(c.Added), Removed: len(c.Removed), Modified: len(c.Modified)}
	if full.Added > MaxChanges || full.Removed > MaxChanges || full.Modified > MaxChanges {
		d.Truncated = &full
	}
	c.Added = c.Added[:min(len(c.Added), MaxChanges)]
	c.Removed = c.Removed[:min(len(c.Removed), MaxChanges)]
	c.Modified = c.Modified[:min(len(c.Modified), MaxChanges)]
	for i := range c.Added {
		c.Added[i].Path, c.Added[i].Value = cutString(c.Added[i].Path), cut(c.Added[i].Value)
	}
	for i := range c.Removed {
		c.Removed[i].Path, c.Removed[i].Value = cutString(c.Removed[i].Path), cut(c.Removed[i].Value)
	}
	for i := range c.Modified {
		m := &c.Modified[i]
		m.Path, m.From, m.To = cutString(m.Path), cut(m.From), cut(m.To)
	}
	return d
}

// cut shortens a string value; other leaves are small already.
func cut(v any) any {
	if s, ok := v.(string); ok {
		return cutString(s)
	}
	return v
}

func cutString(s string) string {
	if utf8.RuneCountInString(s) <= maxValueRunes {
		return s
	}
	return string([]rune(s)[:maxValueRunes]) + "…"
}

// baselineKind is "hardware", "software", or "" when the object is neither.
func baselineKind(baseline map[string]any) string {
	for _, k := range hardwareKeys {
		if _, ok := baseline[k]; ok {
			return kindHardware
		}
	}
	for _, k := range softwareKeys {
		if _, ok := baseline[k]; ok {
			return kindSoftware
		}
	}
	return ""
}

// currentOutput runs list_hardware or list_software and returns its result
// as generic JSON, the same form as the baseline.
func (a *auditor) currentOutput(ctx context.Context, kind string) (map[string]any, error) {
	var result any
	var err error
	if kind == kindHardware {
		result, err = a.hardware(ctx)
	} else {
		result, err = a.software(ctx)
	}
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("encode current %s: %w", kind, err)
	}
	obj, err := decodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("decode current %s: %w", kind, err)
	}
	return obj, nil
}

// decodeObject decodes a JSON object keeping numbers as json.Number.
func decodeObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return obj, nil
}

// firstKeys returns up to n keys of obj, sorted.
func firstKeys(obj map[string]any, n int) []string {
	keys := slices.Sorted(maps.Keys(obj))
	if len(keys) > n {
		keys = keys[:n]
	}
	return keys
}

// leaves flattens a JSON value into its leaf values by path:
//
//	{"cpu":{"cores":8}}                 → cpu.cores = 8
//	{"disks":[{"mount":"/","size_gb":1}]} → disks[/].mount = "/", disks[/].size_gb = 1
//	{"gpus":[{"name":"A100",...}]}      → gpus[A100].name = "A100", ...
//	{"packages":["x==1"]}               → packages[x==1] = "x==1"
//
// Array elements that are objects are keyed by their "mount" or else "name"
// field, strings by their value, anything else by index. A key seen again
// in the same array gets "#2", "#3"... (two identical GPUs). Empty objects
// and arrays have no leaves.
func leaves(obj map[string]any) map[string]any {
	out := map[string]any{}
	flatten("", obj, out)
	return out
}

func flatten(path string, v any, out map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			flatten(joinPath(path, k), child, out)
		}
	case []any:
		seen := map[string]int{}
		for i, elem := range v {
			key := elementKey(elem, i)
			seen[key]++
			if n := seen[key]; n > 1 {
				key = fmt.Sprintf("%s#%d", key, n)
			}
			flatten(path+"["+key+"]", elem, out)
		}
	default:
		out[path] = v
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// elementKey names an array element in a path.
func elementKey(elem any, index int) string {
	switch e := elem.(type) {
	case string:
		return e
	case map[string]any:
		for _, field := range []string{"mount", "name"} {
			if s, ok := e[field].(string); ok {
				return s
			}
		}
	}
	return strconv.Itoa(index)
}

// compareLeaves lists what was added, removed and modified from before to
// after, sorted by path.
func compareLeaves(before, after map[string]any) Changes {
	changes := Changes{Added: []Entry{}, Removed: []Entry{}, Modified: []Modification{}}
	paths := slices.Sorted(maps.Keys(before))
	for p := range after {
		if _, ok := before[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		old, inBefore := before[p]
		now, inAfter := after[p]
		switch {
		case !inBefore:
			changes.Added = append(changes.Added, Entry{Path: p, Value: now})
		case !inAfter:
			changes.Removed = append(changes.Removed, Entry{Path: p, Value: old})
		case !sameValue(old, now):
			changes.Modified = append(changes.Modified, Modification{Path: p, From: old, To: now})
		}
	}
	return changes
}

// sameValue compares two JSON leaves; numbers are compared numerically, so
// 2 and 2.0 are the same.
func sameValue(x, y any) bool {
	xn, xIsNum := x.(json.Number)
	yn, yIsNum := y.(json.Number)
	if xIsNum && yIsNum {
		xf, errX := xn.Float64()
		yf, errY := yn.Float64()
		if errX == nil && errY == nil {
			return xf == yf
		}
		return xn == yn
	}
	return x == y
}
