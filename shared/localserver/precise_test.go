package localserver_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/preciselocal"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// preciseStatus reads what /healthz says of the precise indexes.
func preciseStatus(t *testing.T, srv *serverProcess) []preciselocal.RepoStatus {
	t.Helper()
	resp, err := http.Get("http://" + srv.addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var health struct {
		Precise []preciselocal.RepoStatus `json:"preciseIndexes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&health); err != nil {
		t.Fatal(err)
	}
	return health.Precise
}

// waitPrecise waits until ok holds of the server's precise indexes, or
// fails with them and the server's log after a long while.
func waitPrecise(t *testing.T, srv *serverProcess, what string, ok func([]preciselocal.RepoStatus) bool) []preciselocal.RepoStatus {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		st := preciseStatus(t, srv)
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			raw, _ := json.MarshalIndent(st, "", "  ")
			t.Fatalf("%s: not after 3 minutes:\n%s\n%s", what, raw, srv.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// preciseSettled reports whether every project of every repository is
// ready, failed or unavailable.
func preciseSettled(st []preciselocal.RepoStatus) bool {
	for _, r := range st {
		for _, p := range r.Projects {
			if p.Status == precise.Queued || p.Status == precise.Running {
				return false
			}
		}
	}
	return len(st) > 0
}

// TestPreciseIndexes: the local server indexes a Go repository precisely
// in the background with its own index-go, says so in list_repos and
// /healthz, and indexes an edited file's package again as an overlay,
// which answers for the file — read back from the data directory by a
// keeper that reopens the server's stores and indexes nothing.
func TestPreciseIndexes(t *testing.T) {
	dir, data := repotest.WriteDir(t, map[string]string{
		"go.mod":   "module example.com/zoo\n\ngo 1.22\n",
		"zoo.go":   "// Package zoo keeps animals.\npackage zoo\n\nimport \"example.com/zoo/cat\"\n\n// Count counts cats.\nfunc Count() int { return len(cat.Names()) }\n",
		"cat/c.go": "// Package cat names cats.\npackage cat\n\n// Names are the cats.\nfunc Names() []string { return nil }\n",
	}), t.TempDir()
	srv := startProcess(t, map[string]string{"TOOLSHED_DATA_DIR": data, "TOOLSHED_AUTH": "off", "TOOLSHED_REPO_DIR": dir})
	waitPrecise(t, srv, "the Go project indexed", preciseSettled)
	r, err := srv.call("list_repos", `{}`)
	var listed struct {
		Repos []struct{ Precise []map[string]string }
	}
	if err != nil || !r.OK || json.Unmarshal(r.Result, &listed) != nil || len(listed.Repos) != 1 ||
		!reflect.DeepEqual(listed.Repos[0].Precise, []map[string]string{{"language": "go", "status": "ready"}}) {
		t.Fatalf("list_repos: %s %v", r.Result, err)
	}

	edited := "// Package cat names cats.\npackage cat\n\n// Names are the cats.\nfunc Names() []string { return []string{Tom} }\n\n// Tom is a cat.\nconst Tom = \"Tom\"\n"
	if err := os.WriteFile(filepath.Join(dir, "cat", "c.go"), []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	st := waitPrecise(t, srv, "the edit indexed", func(st []preciselocal.RepoStatus) bool {
		return len(st) == 1 && len(st[0].Projects) == 1 && len(st[0].Projects[0].Stores) == 2
	})
	if overlay := st[0].Projects[0].Stores[1]; !slices.Equal(overlay.Packages, []string{"./cat"}) || overlay.Documents != 1 {
		t.Errorf("the overlay: %+v, want ./cat's one file", overlay)
	}
	srv.kill()

	view, err := repo.NewLocal(dir, repo.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer view.Close()
	k, err := preciselocal.New(preciselocal.Options{Dir: filepath.Join(data, "precise")})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	k.Follow("zoo", view)
	ctx := context.Background()
	for deadline := time.Now().Add(time.Minute); k.State(view).Projects == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the stores were not reopened")
		}
	}
	set, _, err := k.Indexes(ctx, reposcope.Ref{Tenant: "local", Name: "zoo"}, view, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := set.Document("cat/c.go")
	occs, err := set.At(ctx, "cat/c.go", 8, 7)
	if !ok || d.Hash != sha256.Sum256([]byte(edited)) || err != nil || len(occs) == 0 || !strings.HasSuffix(occs[0].Symbol, "`example.com/zoo/cat`/Tom.") {
		t.Errorf("the edited file: %+v, %v; at Tom: %+v, %v", d, ok, occs, err)
	}
	if k.Runs.Load() != 0 || k.Reused.Load() != 2 {
		t.Errorf("reopening the server's stores: %d runs, %d stores reused; want 0 and 2", k.Runs.Load(), k.Reused.Load())
	}
}

// navAnswer is what find_definition and find_references say, in part.
type navAnswer struct {
	Precision, Reason, IndexedCommit string
	Definitions                      []struct {
		Path string
		Line int
	}
	Files []struct {
		Path, Precision, Reason string
		Lines                   []struct{ Line int }
	}
}

// navigate calls a navigation tool of srv and reads its answer.
func navigate(t *testing.T, srv *serverProcess, tool, args string) navAnswer {
	t.Helper()
	r, err := srv.call(tool, args)
	var a navAnswer
	if err != nil || !r.OK || json.Unmarshal(r.Result, &a) != nil {
		t.Fatalf("%s %s: %s %q %v", tool, args, r.Result, r.Error, err)
	}
	return a
}

// TestPreciseNavigation: the navigation tools answer from the local
// server's own precise indexes: precisely once the Go project is indexed,
// by search saying why for a file changed since (which, the server
// waiting TOOLSHED_PRECISE_QUIET before indexing it again, stays changed).
func TestPreciseNavigation(t *testing.T) {
	zoo := "package zoo\n\nimport \"example.com/zoo/cat\"\n\nfunc Count() int { return len(cat.Names()) }\n"
	dir := repotest.WriteDir(t, map[string]string{
		"go.mod":   "module example.com/zoo\n\ngo 1.22\n",
		"zoo.go":   zoo,
		"cat/c.go": "package cat\n\n// Names are the cats.\nfunc Names() []string { return nil }\n",
	})
	srv := startProcess(t, map[string]string{"TOOLSHED_DATA_DIR": t.TempDir(), "TOOLSHED_AUTH": "off",
		"TOOLSHED_REPO_DIR": dir, "TOOLSHED_PRECISE_QUIET": "1h"})
	use := `{"path": "zoo.go", "line": 5, "column": 35}` // Names in cat.Names()
	if a := navigate(t, srv, "find_definition", use); a.Precision == "search" && a.Reason == "" {
		t.Errorf("find_definition while the index may be made: search, saying no reason: %+v", a)
	}
	waitPrecise(t, srv, "the Go project indexed", preciseSettled)

	def := navigate(t, srv, "find_definition", use)
	if def.Precision != "precise" || len(def.Definitions) != 1 || def.Definitions[0].Path != "cat/c.go" || def.Definitions[0].Line != 4 {
		t.Errorf("find_definition of Names: %+v, want precise, at cat/c.go:4", def)
	}
	decl := `{"path": "cat/c.go", "line": 4, "column": 6}`
	refs := navigate(t, srv, "find_references", decl)
	if refs.Precision != "precise" || len(refs.Files) != 1 || refs.Files[0].Path != "zoo.go" || refs.Files[0].Precision != "" {
		t.Errorf("find_references of Names: %+v, want precise, in zoo.go", refs)
	}

	if err := os.WriteFile(filepath.Join(dir, "zoo.go"), []byte(strings.Replace(zoo, "func", "// Count counts cats.\nfunc", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) { // until the view has the change
		r, err := srv.call("read_file", `{"path": "zoo.go"}`)
		if err == nil && strings.Contains(string(r.Result), "Count counts cats") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the edit is not seen: %s %v", r.Result, err)
		}
	}
	def = navigate(t, srv, "find_definition", `{"path": "zoo.go", "line": 6, "column": 35}`)
	if def.Reason != "the file changed since it was indexed" || len(def.Definitions) != 1 || def.Definitions[0].Path != "cat/c.go" {
		t.Errorf("find_definition in the changed file: %+v, want search, saying it changed, finding cat/c.go's Names", def)
	}
	refs = navigate(t, srv, "find_references", decl)
	if refs.Precision != "precise" || len(refs.Files) != 1 || refs.Files[0].Precision != "search" ||
		refs.Files[0].Reason != "the file changed since it was indexed" || len(refs.Files[0].Lines) != 1 || refs.Files[0].Lines[0].Line != 6 {
		t.Errorf("find_references with zoo.go changed: %+v, want precise, zoo.go searched (line 6), saying it changed", refs)
	}
}
