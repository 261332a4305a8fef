package preciselocal

import (
	"slices"
	"testing"

	"github.com/toolshed/toolshed/shared/sciprun"
)

// TestDecide: what a change makes a project's next run do.
func TestDecide(t *testing.T) {
	h := func(b byte) [32]byte { return [32]byte{b} }
	files := map[string][32]byte{"a.go": h(1), "net/http/b.go": h(2), "net/http/c_test.go": h(3), "cmd/go/d.go": h(4)}
	with := func(changes map[string][32]byte, removed ...string) map[string][32]byte {
		out := map[string][32]byte{}
		for p, x := range files {
			if !slices.Contains(removed, p) {
				out[p] = x
			}
		}
		for p, x := range changes {
			out[p] = x
		}
		return out
	}
	many := map[string][32]byte{}
	for i := range maxOverlayPackages + 1 {
		many[string(rune('a'+i))+"/x.go"] = h(9)
	}
	stores := func(n int) []*store { return make([]*store, n) }
	goProject := sciprun.Project{Language: sciprun.Go, Root: ".", Config: "go.mod"}
	tests := []struct {
		name     string
		project  sciprun.Project
		stores   []*store
		now      inputs
		none     bool
		full     bool
		packages []string
	}{
		{"no store yet", goProject, nil, inputs{files: files}, false, true, nil},
		{"nothing changed", goProject, stores(1), inputs{files: files}, true, false, nil},
		{"a file of two packages", goProject, stores(1), inputs{files: with(map[string][32]byte{"net/http/c_test.go": h(7), "cmd/go/d.go": h(7)})}, false, false, []string{"./cmd/go", "./net/http"}},
		{"a file at the root, one added", goProject, stores(2), inputs{files: with(map[string][32]byte{"a.go": h(7), "net/http/new.go": h(7)})}, false, false, []string{".", "./net/http"}},
		{"a file removed", goProject, stores(1), inputs{files: with(nil, "cmd/go/d.go")}, false, true, nil},
		{"go.mod changed", goProject, stores(1), inputs{files: files, config: h(5)}, false, true, nil},
		{"overlays piled up", goProject, stores(maxOverlays + 1), inputs{files: with(map[string][32]byte{"a.go": h(7)})}, false, true, nil},
		{"too many packages", goProject, stores(1), inputs{files: with(many)}, false, true, nil},
		{"another language", sciprun.Project{Language: sciprun.TypeScript, Root: "web"}, stores(1), inputs{files: with(map[string][32]byte{"a.go": h(7)})}, false, true, nil},
		{"a project in a folder", sciprun.Project{Language: sciprun.Go, Root: "cmd"}, stores(1), inputs{files: with(map[string][32]byte{"cmd/go/d.go": h(7)})}, false, false, []string{"./go"}},
	}
	for _, tc := range tests {
		p := &project{Project: tc.project, record: record{stores: tc.stores, inputs: inputs{files: files}}}
		w := decide(p, tc.now)
		if w.none() != tc.none || !tc.none && (w.full != tc.full || !slices.Equal(w.packages, tc.packages)) {
			t.Errorf("%s: none %v, full %v, packages %v (%s); want none %v, full %v, packages %v",
				tc.name, w.none(), w.full, w.packages, w.why, tc.none, tc.full, tc.packages)
		}
	}
}
