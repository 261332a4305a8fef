package lambdaentry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/precisebucket"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/deploytest"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/wiring"
)

// preciseFixture is a git checkout of a Go module in src/ (precise's
// fixture), a TypeScript project in web/ and a README.
func preciseFixture(t *testing.T) (dir, commit string) {
	t.Helper()
	dir = repotest.WriteDir(t, map[string]string{
		"README.md":        "# shapes\n",
		"web/package.json": `{"name":"web"}` + "\n",
		"web/shape.ts":     "// A shape's area, \u00e9 included.\nexport function area(side: number): number {\n  return side * side\n}\n",
		"web/main.ts":      "import { area } from './shape'\n\nconsole.log('\u00e9\u00e9', area(2))\n",
	})
	if err := os.CopyFS(filepath.Join(dir, "src"), os.DirFS("../precise/testdata/fixture")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "shapes"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	head, _ := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	return dir, strings.TrimSpace(string(head))
}

// TestPreciseIndexesDeployed is the acceptance test of the deployed path
// of precise code intelligence: scripts/snapshot push runs the indexers
// of a Go module and a TypeScript project (the Go emitter as its own
// index-go, scip-typescript from this checkout's node_modules) and
// uploads their SCIP files with the snapshot; on the pointer's S3 event
// the real indexer bootstrap queues them and index worker bootstraps
// convert them into the bucket; the navigation functions' wiring, with a
// navigation function's deployed environment, then answers definitions
// and references precisely, in Go and in TypeScript (whose UTF-16
// columns are bytes by then), and says which files are answered by search
// and why.
func TestPreciseIndexesDeployed(t *testing.T) {
	d := newDeployment(t)
	dir, commit := preciseFixture(t)
	snapshot, err := deploytest.BuildSnapshotCLI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.SnapshotPush(t, snapshot, "-tenant", "acme", "-dir", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "precise: goscip indexed src (go)") || !strings.Contains(string(out), "precise: scip-typescript indexed web") {
		t.Fatalf("push: %v\n%s", err, out)
	}
	t.Logf("push:\n%s", out)
	// Until the index workers have converted them, answers are by search
	// and say so.
	square := `{"path":"src/cmd/app/main.go","line":12,"column":15}` // sq := shapes.Square{Side: 2}
	if a := navigateOnce(t, d, "find_definition", square, "acme"); a.Precision != "search" || a.Reason != "the go index is running" {
		t.Errorf("before the conversion: %+v", a)
	}
	f := d.StartFanOut(t, deploytest.FanOutOptions{BatchFiles: 1000, Workers: 2, WorkerTimeout: time.Minute, Visibility: time.Minute})
	published(t, f, "acme")
	s3 := objects.New(d.Moto.S3(), d.Bucket)
	p, _, err := repo.ReadPointer(context.Background(), s3, reposcope.DefaultOf("acme"))
	if err != nil || len(p.Precise) != 2 {
		t.Fatalf("pointer %+v, %v", p, err)
	}
	for _, x := range p.Precise {
		waitConverted(t, s3, "acme", p.Commit, x, f)
	}

	set, state := navigateIndexes(t, d, reposcope.DefaultOf("acme"))
	ctx := context.Background()
	squareSymbol := "scip-go gomod example.com/fixture " + commit + " `example.com/fixture/shapes`/Square#"
	occs, err := set.At(ctx, "src/cmd/app/main.go", 12, 15)
	if err != nil || len(occs) == 0 || occs[0].Symbol != squareSymbol {
		t.Fatalf("At main.go:12:15: %+v, %v", occs, err)
	}
	info, _, err := set.Symbol(ctx, squareSymbol)
	if err != nil || len(info.Definitions) != 1 || info.Definitions[0].Path != "src/shapes/shapes.go" || info.Definitions[0].Line != 11 ||
		!strings.Contains(info.Doc, "four equal sides") {
		t.Errorf("Square's definition: %+v, %v", info, err)
	}
	refs, _, err := set.References(ctx, squareSymbol, precise.Location{}, 100)
	if err != nil || len(refs) < 3 {
		t.Errorf("Square's references: %+v, %v", refs, err)
	}
	// TypeScript: area's use after two é (four bytes, two UTF-16 units).
	ts, err := set.At(ctx, "web/main.ts", 3, 21)
	if err != nil || len(ts) == 0 || !strings.Contains(ts[0].Symbol, "area().") {
		t.Errorf("At main.ts:3:21: %+v, %v", ts, err)
	} else if def, _, _ := set.Symbol(ctx, ts[0].Symbol); len(def.Definitions) != 1 || def.Definitions[0].Path != "web/shape.ts" || def.Definitions[0].Line != 2 {
		t.Errorf("area's definition: %+v", def.Definitions)
	}
	whys := map[string]string{"src/shapes/shapes.go": "", "web/shape.ts": "", "README.md": "no precise index: no SCIP indexer for markdown files"}
	for path, want := range whys {
		if got := state.Why(path, false); got != want {
			t.Errorf("Why(%s) = %q, want %q", path, got, want)
		}
	}
	for _, ps := range state.Projects {
		if ps.Status != precise.Ready || ps.Commit != commit {
			t.Errorf("project %+v", ps)
		}
	}
	preciseAnswers(t, d, commit, square)
	listedPrecise(t, d, commit)
	failedConversion(t, d, f, snapshot, dir, commit)
}

// listedPrecise checks what list_repos, deployed, says of acme's precise
// indexes once converted: each project's language, status and commit.
func listedPrecise(t *testing.T, d *deployment, commit string) {
	t.Helper()
	fn := d.Start(t, d.ToolConfig(t, "list_repos"))
	defer fn.Stop()
	resp := invoke(t, fn, directEvent("list_repos", `{}`, "acme", "precise"))
	var o struct {
		OK     bool
		Result struct {
			Repos []struct {
				Name    string
				Precise []struct{ Language, Root, Status, Reason, Commit string }
			}
		}
	}
	if err := json.Unmarshal(resp.Payload, &o); err != nil || !o.OK || len(o.Result.Repos) != 1 {
		t.Fatalf("list_repos: %v %s\n%s", err, resp.Payload, fn.Output())
	}
	var got []string
	for _, p := range o.Result.Repos[0].Precise {
		got = append(got, fmt.Sprintf("%s %s %s %s", p.Language, p.Root, p.Status, p.Commit))
	}
	want := []string{"go src ready " + commit, "typescript web ready " + commit}
	if !slices.Equal(got, want) {
		t.Errorf("list_repos' precise indexes: %q, want %q", got, want)
	}
}

// preciseAnswers checks the navigation functions' answers about the
// fixture pushed as acme's at commit, once converted: precise, of commit.
func preciseAnswers(t *testing.T, d *deployment, commit, square string) {
	t.Helper()
	def := navigateOnce(t, d, "find_definition", square, "acme")
	if def.Precision != "precise" || def.IndexedCommit != commit || len(def.Definitions) != 1 ||
		def.Definitions[0].Path != "src/shapes/shapes.go" || def.Definitions[0].Line != 11 {
		t.Errorf("find_definition of Square: %+v", def)
	}
	if refs := navigateOnce(t, d, "find_references", square, "acme"); refs.Precision != "precise" || refs.IndexedCommit != commit ||
		!slices.ContainsFunc(refs.Files, func(f struct{ Path string }) bool { return f.Path == "src/cmd/app/main.go" }) {
		t.Errorf("find_references of Square: %+v", refs)
	}
	total := `{"path":"src/shapes/shapes.go","line":27,"column":6}` // func Total
	if c := navigateOnce(t, d, "find_callers", total, "acme"); c.Precision != "precise" || c.IndexedCommit != commit ||
		len(c.Callers) != 1 || c.Callers[0].Name != "main" || c.Callers[0].Path != "src/cmd/app/main.go" {
		t.Errorf("find_callers of Total: %+v", c)
	}
	area := `{"path":"web/main.ts","line":3,"column":21}` // area's use after two é (four bytes, two UTF-16 units)
	if ts := navigateOnce(t, d, "find_definition", area, "acme"); ts.Precision != "precise" || ts.IndexedCommit != commit ||
		len(ts.Definitions) != 1 || ts.Definitions[0].Path != "web/shape.ts" || ts.Definitions[0].Line != 2 {
		t.Errorf("find_definition of area: %+v", ts)
	}
}

// failedConversion pushes the fixture as beta's with a Go index made
// elsewhere (snapshot index-go, pushed with -scip) whose upload is then
// damaged: the index worker records it failed, and answers are by search,
// saying why.
func failedConversion(t *testing.T, d *deployment, f *deploytest.FanOut, snapshot, dir, commit string) {
	t.Helper()
	scip := filepath.Join(t.TempDir(), "src.scip")
	if out, err := exec.Command(snapshot, "index-go", "-tests", "-module-version", commit, "-o", scip, filepath.Join(dir, "src")).CombinedOutput(); err != nil {
		t.Fatalf("index-go: %v\n%s", err, out)
	}
	if out, err := d.SnapshotPush(t, snapshot, "-tenant", "beta", "-dir", dir, "-index=false", "-scip", scip).CombinedOutput(); err != nil {
		t.Fatalf("push -scip: %v\n%s", err, out)
	}
	ctx := context.Background()
	s3 := objects.New(d.Moto.S3(), d.Bucket)
	p, _, err := repo.ReadPointer(ctx, s3, reposcope.DefaultOf("beta"))
	if err != nil || len(p.Precise) != 1 || p.Precise[0].Indexer != repo.Uploaded {
		t.Fatalf("pointer %+v, %v", p, err)
	}
	if _, err := s3.Put(ctx, p.Precise[0].Key, []byte("not a SCIP index"), objects.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	published(t, f, "beta")
	if st := waitStatus(t, s3, "beta", p.Commit, p.Precise[0], f); st.State != precisebucket.Failed {
		t.Fatalf("a damaged upload's conversion: %+v", st)
	}
	a := navigateOnce(t, d, "find_definition", `{"path":"src/cmd/app/main.go","line":12,"column":15}`, "beta")
	if a.Precision != "search" || !strings.HasPrefix(a.Reason, "the go index is failed: ") || len(a.Definitions) == 0 {
		t.Errorf("find_definition after a failed conversion: %+v", a)
	}
	t.Logf("after a failed conversion: %s", a.Message)
}

// waitConverted waits until x's conversion is recorded, and fails the
// test unless it is ready.
func waitConverted(t *testing.T, s3 *objects.Bucket, repoKey, commit string, x repo.PreciseIndex, f *deploytest.FanOut) precisebucket.Status {
	t.Helper()
	st := waitStatus(t, s3, repoKey, commit, x, f)
	if st.State != precisebucket.Ready {
		t.Fatalf("%s's conversion: %+v", x.Root, st)
	}
	return st
}

// waitStatus waits until x's conversion is recorded, and returns its
// status.
func waitStatus(t *testing.T, s3 *objects.Bucket, repoKey, commit string, x repo.PreciseIndex, f *deploytest.FanOut) precisebucket.Status {
	t.Helper()
	for start := time.Now(); time.Since(start) < 2*time.Minute; time.Sleep(100 * time.Millisecond) {
		st, ok, err := precisebucket.ReadStatus(context.Background(), s3, precisebucket.StatusKey(repoKey, commit, x))
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			return st
		}
	}
	t.Fatalf("%s is not converted\nindexer:\n%s\nworkers:\n%s", x.Root, f.Indexer.Output(), strings.Join(workerOutputs(f), "\n"))
	return precisebucket.Status{}
}

// navigateIndexes answers r's precise indexes as a navigation function
// does: its wiring, with its deployed environment (find_symbols').
func navigateIndexes(t *testing.T, d *deployment, r reposcope.Ref) (*precise.Set, precise.State) {
	t.Helper()
	ctx := context.Background()
	indexes, src := navigateWiring(t, d)
	view, err := src.Open(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	set, state, err := indexes(ctx, r, view, nil)
	if err != nil {
		t.Fatal(err)
	}
	return set, state
}

// navigateWiring is a navigation function's wiring, with its deployed
// environment (find_symbols'): where its precise indexes and its
// repositories come from.
func navigateWiring(t *testing.T, d *deployment) (wiring.PreciseIndexes, repo.Source) {
	t.Helper()
	ctx := context.Background()
	env := d.ToolConfig(t, "find_symbols").Env
	getenv := func(k string) string { return env[k] }
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		t.Setenv(k, "dummy")
	}
	t.Setenv("AWS_REGION", "us-east-1")
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		t.Fatal(err)
	}
	w := wiring.NewEnv(cfg, nil)
	w.Getenv = getenv
	t.Cleanup(func() { w.Close() })
	indexes, err := w.PreciseIndexes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	src, err := w.Repo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return indexes, src
}

// preciseAnswer is what a navigation tool's answer says of its precision.
type preciseAnswer struct {
	Precision     string
	IndexedCommit string
	Reason        string
	Definitions   []struct {
		Path string
		Line int
	}
	Callers []struct{ Name, Path string }
	Files   []struct{ Path string }
	Message string
}

// navigateCall calls a navigation tool in fn as the gateway does, and
// returns how long it took and what it answered; a failed call fails the
// test.
func navigateCall(t *testing.T, fn *lambdatest.Function, tool, args, tenant string) (time.Duration, preciseAnswer) {
	t.Helper()
	start := time.Now()
	resp := invoke(t, fn, directEvent(tool, args, tenant, "precise"))
	took := time.Since(start)
	var o struct {
		OK     bool
		Result preciseAnswer
	}
	if err := json.Unmarshal(resp.Payload, &o); err != nil || !o.OK {
		t.Fatalf("%s %s: %v %s\n%s", tool, args, err, resp.Payload, fn.Output())
	}
	return took, o.Result
}

// navigateOnce calls a navigation tool once in a function bootstrap of
// its own, with its deployed environment.
func navigateOnce(t *testing.T, d *deployment, tool, args, tenant string) preciseAnswer {
	t.Helper()
	fn := d.Start(t, d.ToolConfig(t, tool))
	defer fn.Stop()
	_, a := navigateCall(t, fn, tool, args, tenant)
	return a
}
