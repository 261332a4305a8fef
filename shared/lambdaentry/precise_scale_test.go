package lambdaentry_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
	"github.com/toolshed/toolshed/shared/testenv/latency"
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
// TOOLSHED_PRECISE_SCALE_TREE names a git checkout of the Go tree (at its
// root, in src/, or five copies of it in src1/ to src5/; make bench-precise):
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
	navigateScaled(t, d, r, dir, p.Commit, start)
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

// navigateScaled measures the navigation functions on the repository
// through the agent's path (the HTTP API, the authorizer, the gateway):
// for find_definition, find_references and find_callers of
// (*http.Client).Do, each in a function bootstrap of its own under the
// harness (its deployed memory, its share of a core), its cold call (init
// included: the snapshot's view and its precise indexes read) and warm
// answers against its deadline, and its peak RSS against its memory; and
// the time from the start of the push to the first precise answer. Every
// answer must be precise, of the pushed commit.
func navigateScaled(t *testing.T, d *deployment, r reposcope.Ref, dir, commit string, pushed time.Time) {
	t.Helper()
	path := treeRoot(t, dir) + "net/http/client.go"
	line, col := lineOf(t, filepath.Join(dir, filepath.FromSlash(path)), "func (c *Client) Do(", "Do(")
	at := fmt.Sprintf(`{"path":%q,"line":%d,"column":%d}`, path, line, col)
	tools := []string{"find_definition", "find_references", "find_callers"}
	api := d.AgentAPI(t, tools)
	for _, tool := range tools {
		cfg := d.ToolConfig(t, tool)
		cfg.VCPU = lambdatest.VCPUOf(cfg.MemoryMB)
		contract, _ := d.Contracts.Get(tool)
		deadline := time.Duration(contract.TimeoutMs) * time.Millisecond
		fn := d.Start(t, cfg)
		initTook, err := fn.InitDuration(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		first, answer, _ := timedCall(t, api, tool, at, r.Tenant) // a cold call past its deadline is a figure, not a failure
		var warm []time.Duration
		for range 3 * scaleWarmRounds {
			took, a, _ := timedCall(t, api, tool, at, r.Tenant)
			if a != "ok" {
				t.Fatalf("%s, warm: %s\n%s", tool, a, fn.Output())
			}
			warm = append(warm, took)
		}
		var pa preciseAnswer
		if a, _ := api.Call(t, tool, at, r.Tenant); json.Unmarshal(a.Result, &pa) != nil || pa.Precision != "precise" || pa.IndexedCommit != commit {
			t.Fatalf("%s: %s %+v", tool, a.Code, pa)
		}
		if tool == tools[0] {
			t.Logf("precise navigation %v after the push began", time.Since(pushed).Round(time.Second))
		}
		peak, _ := fn.PeakRSS()
		cold := initTook + first
		t.Logf("%s (%d MB, %.2f vCPU, deadline %v): cold %v (init %v + call %v, %s)%s, warm p50 %v p99 %v%s, peak RSS %d MiB of %d MB",
			tool, cfg.MemoryMB, cfg.VCPU, deadline, cold.Round(time.Millisecond), initTook.Round(time.Millisecond),
			first.Round(time.Millisecond), answer, overDeadline(cold, deadline), latency.Percentile(warm, 50).Round(time.Millisecond),
			latency.Percentile(warm, 99).Round(time.Millisecond), overDeadline(latency.Percentile(warm, 100), deadline), peak>>20, cfg.MemoryMB)
		fn.Stop()
	}
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
