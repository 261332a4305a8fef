package lambdaentry_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/precisebucket"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/testenv/deploytest"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
)

// TestPreciseScale's settings.
var (
	preciseScaleTree = settings.New("TOOLSHED_PRECISE_SCALE_TREE", "",
		"the git checkout TestPreciseScale pushes with its precise index (none: it is skipped)", settings.Text)
	preciseScaleSCIP = settings.New("TOOLSHED_PRECISE_SCALE_SCIP", "",
		"a SCIP file of that checkout TestPreciseScale pushes with -scip, instead of running the indexers", settings.Text)
)

// TestPreciseScale measures what a large repository's precise index costs
// deployed: scripts/snapshot push indexing it (or pushing a SCIP file made
// before, as one file), each SCIP file converted by an index worker
// bootstrap under the harness (its deployed timeout, its memory's CPU
// share; its peak RSS against its memory), the stores' size, and the cold
// and warm time a navigation function's wiring takes to open them and
// answer a definition and a page of references. It runs only when
// TOOLSHED_PRECISE_SCALE_TREE names a git checkout (make bench-precise):
//
//	TOOLSHED_PRECISE_SCALE_TREE=/tmp/big5 go test -run TestPreciseScale -v -timeout 60m ./shared/lambdaentry/
func TestPreciseScale(t *testing.T) {
	dir, _ := preciseScaleTree.Get(os.Getenv)
	if dir == "" {
		t.Skip(preciseScaleTree.Name() + " names no tree to measure")
	}
	d := newDeployment(t)
	snapshot, err := deploytest.BuildSnapshotCLI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-tenant", "big", "-dir", dir}
	if scip, _ := preciseScaleSCIP.Get(os.Getenv); scip != "" {
		args = append(args, "-index=false", "-scip", scip)
	}
	start := time.Now()
	out, err := d.SnapshotPush(t, snapshot, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	t.Logf("push took %v:\n%s", time.Since(start).Round(time.Second), out)
	s3 := objects.New(d.Moto.S3(), d.Bucket)
	r := reposcope.DefaultOf("big")
	p, _, err := repo.ReadPointer(context.Background(), s3, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range p.Precise {
		if x.Key != "" {
			convertScaled(t, d, s3, p, x)
		}
	}
	navigateScaled(t, d, r, dir)
}

// convertScaled converts x as an index worker does, in a worker
// environment of its own under the harness, and logs what it took.
func convertScaled(t *testing.T, d *deployment, s3 *objects.Bucket, p repo.Pointer, x repo.PreciseIndex) {
	t.Helper()
	cfg := d.IndexerConfig(t)
	cfg.Name, cfg.Timeout = "toolshed-index-worker", 300*time.Second
	cfg.VCPU = lambdatest.VCPUOf(cfg.MemoryMB)
	fn := d.Start(t, cfg)
	defer fn.Stop()
	body, _ := json.Marshal(map[string]any{"precise": indexer.PreciseJob{RepoKey: "big", Commit: p.Commit, SnapshotSeq: p.Seq, Index: x}})
	event, _ := json.Marshal(events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", EventSource: "aws:sqs", Body: string(body)}}})
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout+time.Minute)
	defer cancel()
	resp, err := fn.Invoke(ctx, event)
	took := time.Since(start)
	if err != nil || resp.FunctionError != "" || strings.Contains(string(resp.Payload), "itemIdentifier") {
		t.Fatalf("converting %s: %v %s\n%s", x.Key, err, resp.Payload, fn.Output())
	}
	st, ok, err := precisebucket.ReadStatus(context.Background(), s3, precisebucket.StatusKey("big", p.Commit, x))
	if err != nil || !ok || st.State != precisebucket.Ready {
		t.Fatalf("%s: %+v, %v, %v", x.Key, st, ok, err)
	}
	peak, _ := fn.PeakRSS()
	t.Logf("converted %s (%s): %d MB of SCIP into %d MB (%d documents, %d left out) in %v (conversion %.1f s) at %.2f vCPU, peak RSS %d MiB of %d MB, deadline %v",
		x.Root, x.Indexer, st.SCIPBytes>>20, st.Bytes>>20, st.Documents, st.Skipped, took.Round(100*time.Millisecond), st.Seconds,
		cfg.VCPU, peak>>20, cfg.MemoryMB, cfg.Timeout)
}

// navigateScaled opens the repository's precise indexes as a navigation
// function's wiring does, cold (a new wiring, the snapshot's view read
// first) three times, and times a definition and a page of references of
// (*http.Client).Do, first and warm.
func navigateScaled(t *testing.T, d *deployment, r reposcope.Ref, dir string) {
	t.Helper()
	ctx := context.Background()
	path := clientGo(t, dir)
	line, col := lineOf(t, filepath.Join(dir, filepath.FromSlash(path)), "func (c *Client) Do(", "Do(")
	for range 3 {
		indexes, src := navigateWiring(t, d)
		start := time.Now()
		view, err := src.Open(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		viewed := time.Since(start)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start = time.Now()
		set, state, err := indexes(ctx, r, view, nil)
		if err != nil {
			t.Fatal(err)
		}
		opened := time.Since(start)
		runtime.GC()
		runtime.ReadMemStats(&after)
		var times []time.Duration
		for range 6 {
			start = time.Now()
			if _, _, err := indexes(ctx, r, view, nil); err != nil {
				t.Fatal(err)
			}
			definitionAndReferences(t, set, state, path, line, col)
			times = append(times, time.Since(start))
		}
		slices.Sort(times[1:])
		t.Logf("the snapshot's view in %v; its precise indexes opened in %v (heap +%.1f MB); a definition and 100 references: first %v, then p50 %v, max %v",
			viewed.Round(time.Millisecond), opened.Round(time.Millisecond), float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/1e6,
			times[0].Round(time.Microsecond), times[3].Round(time.Microsecond), times[5].Round(time.Microsecond))
	}
}

// definitionAndReferences answers what is at path:line:col, its
// definition and its first 100 references, as find_definition and
// find_references do.
func definitionAndReferences(t *testing.T, set *precise.Set, state precise.State, path string, line, col int) {
	t.Helper()
	ctx := context.Background()
	occs, err := set.At(ctx, path, line, col)
	if err != nil || len(occs) == 0 {
		t.Fatalf("At %s:%d:%d: %+v, %v (%s)", path, line, col, occs, err, state.Why(path, false))
	}
	info, _, err := set.Symbol(ctx, occs[0].Symbol)
	if err != nil || len(info.Definitions) == 0 {
		t.Fatalf("definition of %s: %+v, %v", occs[0].Symbol, info, err)
	}
	if refs, _, err := set.References(ctx, occs[0].Symbol, precise.Location{}, 100); err != nil || len(refs) == 0 {
		t.Fatalf("references of %s: %v", occs[0].Symbol, err)
	}
}

// clientGo is net/http/client.go in the tree: in its first copy (src1/)
// when it holds five, else in src/.
func clientGo(t *testing.T, dir string) string {
	for _, p := range []string{"src1/net/http/client.go", "src/net/http/client.go"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			return p
		}
	}
	t.Fatalf("no net/http/client.go in %s", dir)
	return ""
}

// lineOf returns the 1-based line of the first line of the file at name
// holding text, and the column of at in it.
func lineOf(t *testing.T, name, text, at string) (int, int) {
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.Contains(sc.Text(), text) {
			return n, strings.Index(sc.Text(), at) + 1
		}
	}
	t.Fatalf("%s has no %q", name, text)
	return 0, 0
}
