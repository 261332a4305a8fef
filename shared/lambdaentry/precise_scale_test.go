package lambdaentry_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/objects"
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
// share; its peak RSS against its memory), the stores' size, and
// find_definition, find_references and find_callers of
// (*http.Client).Do in their functions' bootstraps, cold and warm,
// against their deadlines and memory. It runs only when
// TOOLSHED_PRECISE_SCALE_TREE names a git checkout of the Go tree (its
// src/, or five copies of it in src1/ to src5/; make bench-precise):
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
	navigateScaled(t, d, r, dir, p.Commit)
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

// navigateScaled measures the navigation functions on the repository:
// for find_definition, find_references and find_callers of
// (*http.Client).Do, each in a function bootstrap of its own under the
// harness (its deployed memory, its share of a core), its init, its
// first (cold: the snapshot's view and its precise indexes read) and
// warm answers against its deadline, and its peak RSS against its memory.
// Every answer must be precise, of the pushed commit.
func navigateScaled(t *testing.T, d *deployment, r reposcope.Ref, dir, commit string) {
	t.Helper()
	path := clientGo(t, dir)
	line, col := lineOf(t, filepath.Join(dir, filepath.FromSlash(path)), "func (c *Client) Do(", "Do(")
	at := fmt.Sprintf(`{"path":%q,"line":%d,"column":%d}`, path, line, col)
	for _, tool := range []string{"find_definition", "find_references", "find_callers"} {
		cfg := d.ToolConfig(t, tool)
		cfg.VCPU = lambdatest.VCPUOf(cfg.MemoryMB)
		contract, _ := d.Contracts.Get(tool)
		fn := d.Start(t, cfg)
		initTook, err := fn.InitDuration(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var times []time.Duration
		var first string
		for i := range 7 {
			took, answer := timedCall(t, fn, tool, at, r.Tenant)
			if i == 0 {
				first = answer // a cold call past its deadline is a figure, not a failure
			} else if answer != "ok" {
				t.Fatalf("%s, warm: %s\n%s", tool, answer, fn.Output())
			}
			times = append(times, took)
		}
		if _, a := navigateCall(t, fn, tool, at, r.Tenant); a.Precision != "precise" || a.IndexedCommit != commit {
			t.Fatalf("%s: %+v", tool, a)
		}
		slices.Sort(times[1:])
		peak, _ := fn.PeakRSS()
		t.Logf("%s (%d MB, %.2f vCPU, deadline %v): init %v, first call %v (%s), warm p50 %v max %v, peak RSS %d MiB",
			tool, cfg.MemoryMB, cfg.VCPU, time.Duration(contract.TimeoutMs)*time.Millisecond, initTook.Round(time.Millisecond),
			times[0].Round(time.Millisecond), first, times[4].Round(time.Millisecond), times[6].Round(time.Millisecond), peak>>20)
		fn.Stop()
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
