package precise_test

import (
	"testing"

	"github.com/toolshed/toolshed/shared/precise"
)

func TestStateWhy(t *testing.T) {
	st := precise.State{
		Projects: []precise.ProjectState{
			{Language: "go", Status: precise.Ready, Commit: "c1"},
			{Root: "web", Language: "typescript", Status: precise.Running, Reason: "started 12 s ago"},
			{Root: "py", Language: "python", Status: precise.Queued},
		},
		Cover: func(path string) (int, string) {
			switch path {
			case "a.go":
				return 0, ""
			case "web/a.ts":
				return 1, ""
			case "py/a.py":
				return 2, ""
			}
			return -1, "no indexer reads kotlin"
		},
	}
	for _, c := range []struct {
		path    string
		changed bool
		want    string
	}{
		{"a.go", false, ""},
		{"a.go", true, "the file changed since it was indexed"},
		{"web/a.ts", false, "the typescript index is running: started 12 s ago"},
		{"py/a.py", false, "the python index is queued"},
		{"a.kt", false, "no indexer reads kotlin"},
	} {
		if got := st.Why(c.path, c.changed); got != c.want {
			t.Errorf("Why(%s, %v) = %q, want %q", c.path, c.changed, got, c.want)
		}
	}
	if got := (precise.State{}).Why("a.go", false); got != "no precise index covers this repository" {
		t.Errorf("an empty state: %q", got)
	}
}
