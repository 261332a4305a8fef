package navcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
)

// TestTools reads the tools' answers as the contracts shape them: every
// page of find_references, its declarations and the files answered by
// search left out; find_definition's definitions with a place, those
// found by search in a changed file left out; an answer by search is
// none, and so is a call the tool refused, both counted with their
// reason; a call that fails otherwise is an error.
func TestTools(t *testing.T) {
	answers := map[string]string{
		"find_definition a.go:3:5": `{"name":"F","precision":"precise","indexedCommit":"c","total":2,"definitions":[
			{"symbol":"s","name":"F","path":"b.go","line":7,"column":6},{"symbol":"t","name":"G","external":true},
			{"name":"F","path":"e.go","line":2,"column":6,"precision":"search","reason":"changed"}]}`,
		"find_definition a.go:9:1": `{"name":"x","precision":"search","reason":"no symbol at the position","total":0,"definitions":[]}`,
		"find_references a.go:3:5 ": `{"name":"F","precision":"precise","totalLines":3,"next_cursor":"p2","files":[
			{"path":"a.go","language":"go","lines":[{"line":3,"columns":[5],"roles":["reference"],"text":"F()"}]},
			{"path":"b.go","language":"go","lines":[{"line":7,"columns":[6],"roles":["definition"],"text":"func F()"}]}]}`,
		"find_references a.go:3:5 p2": `{"name":"F","precision":"precise","totalLines":3,"next_cursor":null,"files":[
			{"path":"c.go","language":"go","lines":[{"line":1,"columns":[2,9],"roles":["reference","write"],"text":"F; F"}]},
			{"path":"d.go","language":"go","precision":"search","reason":"changed","lines":[{"line":4,"columns":[1],"text":"F"}]}]}`,
	}
	tools := &Tools{Call: func(tool string, args map[string]any) (json.RawMessage, error) {
		key := fmt.Sprintf("%s %s:%d:%d", tool, args["path"], args["line"], args["column"])
		if tool == "find_references" {
			cursor, _ := args["cursor"].(string)
			key += " " + cursor
		}
		if a, ok := answers[key]; ok {
			return json.RawMessage(a), nil
		}
		if args["path"] == "dist/x.go" {
			return nil, &Refused{Code: "INVALID_INPUT", Message: "path: dist/x.go is not a file the navigation tools read"}
		}
		return nil, fmt.Errorf("no answer for %s", key)
	}}
	ctx := context.Background()
	defs, err := tools.Definitions(ctx, Location{"a.go", 3, 5})
	if err != nil || !slices.Equal(defs, []Location{{"b.go", 7, 6}}) {
		t.Errorf("definitions %v, %v; want b.go:7:6", defs, err)
	}
	refs, err := tools.References(ctx, Location{"a.go", 3, 5})
	if want := []Location{{"a.go", 3, 5}, {"c.go", 1, 2}, {"c.go", 1, 9}}; err != nil || !slices.Equal(refs, want) {
		t.Errorf("references %v, %v; want %v", refs, err, want)
	}
	if defs, err := tools.Definitions(ctx, Location{"a.go", 9, 1}); err != nil || defs != nil {
		t.Errorf("a search answer gave %v, %v; want none", defs, err)
	}
	for _, refused := range []func() ([]Location, error){
		func() ([]Location, error) { return tools.Definitions(ctx, Location{"dist/x.go", 1, 1}) },
		func() ([]Location, error) { return tools.References(ctx, Location{"dist/x.go", 2, 1}) },
	} {
		if got, err := refused(); err != nil || got != nil {
			t.Errorf("a refused call gave %v, %v; want none", got, err)
		}
	}
	if _, err := tools.Definitions(ctx, Location{"a.go", 7, 7}); err == nil {
		t.Error("a failed call gave no error")
	}
	want := map[string]int{"no symbol at the position": 1, "INVALID_INPUT: path: <path> is not a file the navigation tools read": 2}
	if got := tools.Search(); !maps.Equal(got, want) {
		t.Errorf("answers made by search or refused %v, want %v", got, want)
	}
}
