package lambdaentry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/testenv/deploytest"
	"github.com/toolshed/toolshed/shared/testenv/embedtest"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
	"github.com/toolshed/toolshed/shared/testenv/latency"
	"github.com/toolshed/toolshed/shared/testenv/localrun"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestScale's settings (make bench-fanout sets the tree).
var (
	scaleTree = settings.New("TOOLSHED_SCALE_TREE", "",
		"the git checkout TestScale measures (none: it is skipped)", settings.Text)
	scaleWorkers = settings.New("TOOLSHED_SCALE_WORKERS", strconv.Itoa(embedding.IndexWorkers),
		"TestScale's index workers (as deployed)", settings.Positive)
	scaleLogs = settings.New("TOOLSHED_SCALE_LOGS", "",
		"a folder for TestScale's indexer functions' output", settings.Text)
	scaleEmbedWithin = settings.New("TOOLSHED_SCALE_EMBED_WITHIN", "30m",
		"how long TestScale waits for the index to be fully embedded, once searchable by words (0: it indexes by words only)", durationOrZero)
)

// durationOrZero parses a positive duration, or 0.
func durationOrZero(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	return settings.Duration(s)
}

// TestScale measures, through the harness, what a large repository costs
// deployed: indexing it through the fan-out (the real indexer and worker
// bootstraps, moto_server's S3 and SQS, the Titan V2 stand-in under the
// assumed default quota at its published latency) — the time to lexical
// search (the index published) and, apart, the time to fully embedded —
// then the calls of context_search, grep_codebase, read_file,
// find_symbols and find_references as a remote agent makes them (through
// the HTTP API, the authorizer with its cache and the gateway; see
// deploytest.AgentAPI), each function at the CPU share its memory buys,
// frozen between calls and held to its memory: cold (init included), the
// calls until the answers are whole, warm p50 and p99, peak RSS; then two
// tenants alternating on one environment. It runs only when TOOLSHED_SCALE_TREE names
// a git checkout (make bench-fanout TREE=..., not make test):
//
//	TOOLSHED_SCALE_TREE=/tmp/u/big5 go test -run TestScale -v -timeout 90m ./shared/lambdaentry/
//
// TOOLSHED_SCALE_WORKERS sets the index workers (as deployed:
// embedding.IndexWorkers);
// TOOLSHED_SCALE_LOGS names a folder for the indexer functions' output;
// TOOLSHED_SCALE_EMBED_WITHIN bounds the wait for the embedding (under the
// default quota the five-copy tree takes hours: past it, the test reports
// how far it is and the time left at the rate seen). The
// snapshot is packed and uploaded by the test itself (repo.Publish with
// moto's client), not by scripts/snapshot.
func TestScale(t *testing.T) {
	dir, _ := scaleTree.Get(os.Getenv) // settings.Text takes any value
	if dir == "" {
		t.Skip(scaleTree.Name() + " names no tree to measure")
	}
	workers, err := scaleWorkers.Get(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	embedWithin, err := scaleEmbedWithin.Get(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	d := newDeployment(t)
	d.S3(t)
	start := time.Now()
	p := publishCheckout(t, d, "big", dir)
	t.Logf("published %d files, %d MB (zip %d MB) in %v", p.Files, p.Bytes>>20, p.ZipBytes>>20, time.Since(start).Round(time.Second))
	// A second tenant with its own copy, for the two-tenant phase below,
	// pushed at once: its build batches then queue behind the first's
	// build, not behind the first's embedding, which takes hours under the
	// quota (a build queued behind embed rounds waits for them: see
	// docs/benchmarks.md).
	p2 := publishCheckout(t, d, "big2", dir)

	o := deploytest.FanOutOptions{BatchFiles: 1000, Workers: workers, WorkerTimeout: 300 * time.Second, Visibility: 600 * time.Second,
		VCPU: lambdatest.VCPUOf(deploytest.IndexerMemoryMB)}
	if embedWithin > 0 {
		o.Embed = &embedtest.TitanOptions{Quota: embedding.TitanDefaultQuota, LatencyMedian: embedtest.TitanLatency, LatencySpread: embedtest.TitanLatencySpread}
	}
	f := d.StartFanOut(t, o)
	start = time.Now()
	published(t, f, "big")
	planned := time.Since(start)
	published(t, f, "big2")
	stopProgress := logProgress(t, d, f, "big", 30*time.Second)
	m := waitPublished(t, f, "big", p.Commit, 90*time.Minute)
	took := time.Since(start)
	waitPublished(t, f, "big2", p2.Commit, 90*time.Minute)
	took2 := time.Since(start)
	stopProgress()
	total := indexfile.Totals(m.Parts)
	peakPlan, _ := f.Indexer.PeakRSS()
	t.Logf("indexed: %d files, %d chunks in %d batches; planned in %v, lexical search after %v (the second tenant's, pushed with it, after %v)",
		total.Files, total.Chunks, len(m.Parts), planned.Round(time.Millisecond), took.Round(time.Second), took2.Round(time.Second))
	if embedWithin > 0 {
		logEmbedding(t, f, "big", p.Commit, start, embedWithin)
	}
	t.Logf("peak RSS: indexer (plan) %d MiB, index workers %d MiB (of %d MB); %d worker environments, %d events (%d failed)",
		peakPlan>>20, f.Workers.PeakRSS()>>20, deploytest.IndexerMemoryMB, f.Workers.Started(), f.Source.Events.Load(), f.Source.Failed.Load())
	f.Workers.Stop()

	api := d.AgentAPI(t, scaleTools)
	for _, c := range scaleCalls(treeRoot(t, dir)) {
		for _, warmUp := range []bool{true, false} {
			measureTool(t, d, api, c, warmUp)
		}
	}
	for _, c := range scaleCalls(treeRoot(t, dir))[:2] {
		twoTenants(t, d, api, c.tool, c.first)
	}
	gatewayPeak, _ := api.Gateway.PeakRSS()
	authorizerPeak, _ := api.Authorizer.PeakRSS()
	t.Logf("gateway peak RSS %d MiB of %d MB, authorizer %d MiB of %d MB",
		gatewayPeak>>20, deploytest.GatewayMemoryMB, authorizerPeak>>20, deploytest.AuthorizerMemoryMB)
}

// scaleTools are the tools TestScale measures.
var scaleTools = []string{"context_search", "grep_codebase", "read_file", "find_symbols", "find_references",
	"list_commits", "blame", "list_files"}

// scaleCall is a measured tool's first call and the warm calls made in
// turn after it.
type scaleCall struct {
	tool, first string
	warm        []string
}

// scaleCalls are TestScale's calls on a tree whose Go source is under
// root ("src1/" in the five copies).
func scaleCalls(root string) []scaleCall {
	return []scaleCall{
		{"context_search", `{"query":"parse an HTTP request header"}`,
			[]string{`{"query":"type checker for generic functions"}`, `{"query":"mutex lock unlock"}`, `{"query":"gzip reader checksum"}`}},
		{"grep_codebase", `{"pattern":"func \\(c \\*Client\\) Do\\("}`,
			[]string{`{"pattern":"ErrNotExist"}`, `{"pattern":"func New[A-Z]\\w*\\("}`, `{"pattern":"TODO\\(","limit":5}`}},
		{"read_file", `{"path":"` + root + `net/http/client.go"}`,
			[]string{`{"path":"` + root + `strings/builder.go"}`, `{"path":"` + root + `sort/sort.go"}`, `{"path":"` + root + `bufio/scan.go"}`}},
		{"find_symbols", `{"name":"ReadMIMEHeader"}`,
			[]string{`{"name":"NewReader"}`, `{"name":"Builder"}`, `{"name":"Unmarshal"}`}},
		{"find_references", `{"name":"ReadMIMEHeader"}`,
			[]string{`{"name":"NewScanner"}`, `{"name":"Builder"}`, `{"name":"ErrNotExist","limit":50}`}},
		// The history: the function copies it into its /tmp first.
		{"list_commits", `{"path":"` + root + `net/http/client.go"}`,
			[]string{`{}`, `{"limit":5}`, `{"path":"` + root + `sort/sort.go"}`}},
		{"blame", `{"path":"` + root + `net/http/client.go","ref":"HEAD"}`,
			[]string{`{"path":"` + root + `strings/builder.go","ref":"HEAD"}`, `{"path":"` + root + `sort/sort.go","ref":"HEAD"}`, `{"path":"` + root + `bufio/scan.go","ref":"HEAD"}`}},
		{"read_file", `{"path":"` + root + `net/http/client.go","ref":"HEAD"}`,
			[]string{`{"path":"` + root + `strings/builder.go","ref":"HEAD"}`, `{"path":"` + root + `sort/sort.go","ref":"HEAD"}`, `{"path":"` + root + `bufio/scan.go","ref":"HEAD"}`}},
		{"list_files", `{"path":"` + root + `net/http","ref":"HEAD"}`,
			[]string{`{"path":"` + root + `strings","ref":"HEAD"}`, `{"path":"` + root + `sort","ref":"HEAD"}`}},
		{"grep_codebase", `{"pattern":"func \\(c \\*Client\\) Do\\(","ref":"HEAD"}`,
			[]string{`{"pattern":"ErrNotExist","ref":"HEAD"}`, `{"pattern":"TODO\\(","limit":5,"ref":"HEAD"}`}},
	}
}

// treeRoot is the folder of the Go tree's source in the checkout dir:
// its first copy (src1/) when it holds five, src/ when it is a Go
// checkout, else its root.
func treeRoot(t *testing.T, dir string) string {
	for _, root := range []string{"src1/", "src/", ""} {
		if _, err := os.Stat(filepath.Join(dir, root, "net/http/client.go")); err == nil {
			return root
		}
	}
	t.Fatalf("no net/http/client.go in %s", dir)
	return ""
}

// scaleWarmRounds is how many times the warm calls are made in turn.
const scaleWarmRounds = 5

// measureTool measures c through the agent's path on a fresh environment
// of its function: the repository read in the init (warmUp: it is the
// function's default repository) or in the first call. It logs the cold
// call (init included: Lambda runs the init when the call arrives), how
// many calls the agent makes before the answers are whole, the warm
// p50 and p99, and the peak RSS, next to the deadline and the memory.
func measureTool(t *testing.T, d *deployment, api *deploytest.AgentAPI, c scaleCall, warmUp bool) {
	t.Helper()
	cfg := d.ToolConfig(t, c.tool)
	tenant, how := "big", "in the first call" // its own repository
	if warmUp {
		cfg.Env[config.DefaultRepo.Name()] = "big"
		tenant, how = "newcomer", "in the init"
	}
	cfg.VCPU = lambdatest.VCPUOf(cfg.MemoryMB)
	cfg.Env[config.RateLimits.Name()] = localrun.UnlimitedRates(c.tool) // an agent's pace, not its quota, is measured
	contract, _ := d.Contracts.Get(c.tool)
	deadline := time.Duration(contract.TimeoutMs) * time.Millisecond
	fn := d.Start(t, cfg)
	defer fn.Stop()
	initTook, err := fn.InitDuration(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	first, answer, ready := timedCall(t, api, c.tool, c.first, tenant)
	calls, untilReady := 1, initTook+first
	for ; !ready && calls < 100; calls++ {
		took, a, r := timedCall(t, api, c.tool, c.first, tenant)
		untilReady, ready, answer = untilReady+took, r, a
	}
	var rest []time.Duration
	for range scaleWarmRounds {
		for _, a := range c.warm {
			took, _, _ := timedCall(t, api, c.tool, a, tenant)
			rest = append(rest, took)
		}
	}
	peak, _ := fn.PeakRSS()
	cold := initTook + first
	t.Logf("%s (%d MB, %.2f vCPU, deadline %v), repository read %s: cold %v (init %v + call %v)%s; whole after %d calls (%v, %s); warm p50 %v p99 %v%s; peak RSS %d MiB of %d MB",
		c.tool, cfg.MemoryMB, cfg.VCPU, deadline, how, cold.Round(time.Millisecond), initTook.Round(time.Millisecond), first.Round(time.Millisecond),
		overDeadline(cold, deadline), calls, untilReady.Round(time.Millisecond), answer,
		latency.Percentile(rest, 50).Round(time.Millisecond), latency.Percentile(rest, 99).Round(time.Millisecond),
		overDeadline(latency.Percentile(rest, 100), deadline), peak>>20, cfg.MemoryMB)
}

// overDeadline marks a time past the deadline.
func overDeadline(took, deadline time.Duration) string {
	if took > deadline {
		return " PAST THE DEADLINE"
	}
	return ""
}

// twoTenants measures one environment of tool answering two tenants, each
// with its own copy of the tree, every call switching tenant: the first
// call of each reads its repository, later ones must find both held.
func twoTenants(t *testing.T, d *deployment, api *deploytest.AgentAPI, tool, args string) {
	t.Helper()
	cfg := d.ToolConfig(t, tool)
	cfg.VCPU = lambdatest.VCPUOf(cfg.MemoryMB)
	cfg.Env[config.RateLimits.Name()] = localrun.UnlimitedRates(tool)
	contract, _ := d.Contracts.Get(tool)
	fn := d.Start(t, cfg)
	defer fn.Stop()
	var firsts, switches []string
	var rest []time.Duration
	for i := range 12 {
		took, answer, _ := timedCall(t, api, tool, args, []string{"big", "big2"}[i%2])
		if i < 2 {
			firsts = append(firsts, fmt.Sprintf("%v (%s)", took.Round(time.Millisecond), answer))
			continue
		}
		rest = append(rest, took)
		if !strings.HasPrefix(answer, "ok") {
			switches = append(switches, answer)
		}
	}
	peak, _ := fn.PeakRSS()
	t.Logf("%s (%d MB, %.2f vCPU, deadline %v), two tenants on one environment: first calls %s; 10 switches, p50 %v slowest %v, not ok: %v; peak RSS %d MiB of %d MB",
		tool, cfg.MemoryMB, cfg.VCPU, time.Duration(contract.TimeoutMs)*time.Millisecond, strings.Join(firsts, ", "),
		latency.Percentile(rest, 50).Round(time.Millisecond), latency.Percentile(rest, 100).Round(time.Millisecond), switches, peak>>20, cfg.MemoryMB)
}

// logEmbedding waits, at most within, for the index of commit to be
// fully embedded, and logs the time from start, or how far it is and the
// time left at the rate seen.
func logEmbedding(t *testing.T, f *deploytest.FanOut, tenant, commit string, start time.Time, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	m, err := f.WaitEmbedded(ctx, tenant, commit)
	took := time.Since(start)
	rate := float64(f.Embed.Requests.Load()) / took.Seconds()
	t.Logf("Titan: %d requests (%.0f/s), %d tokens, %d throttled", f.Embed.Requests.Load(), rate, f.Embed.Tokens.Load(), f.Embed.Throttled.Load())
	if err == nil {
		total := indexfile.Totals(m.Parts)
		t.Logf("fully embedded after %v: %d of %d chunks with a vector (%d reused, %d failed)",
			took.Round(time.Second), total.Vectors, total.Chunks, total.Reused, total.Failed)
		return
	}
	p, _, err := f.Store.Pointer(context.Background(), tenant, "")
	if err != nil {
		t.Fatal(err)
	}
	left := time.Duration(float64(p.Pending) / max(rate, 1e-9) * float64(time.Second))
	t.Logf("not fully embedded after %v: %d of %d chunks with a vector, %d pending; about %v more at this rate",
		took.Round(time.Second), p.Embedded, p.Chunks, p.Pending, left.Round(time.Minute))
}

// publishCheckout publishes the files git lists in dir (as scripts/snapshot
// push does) as tenant's snapshot, with no size limit.
func publishCheckout(t *testing.T, d *deployment, tenant, dir string) repo.Pointer {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" && !strings.HasPrefix(p, ".toolshed/") {
			paths = append(paths, p)
		}
	}
	head, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	s3 := repotest.S3{Moto: d.Moto, Bucket: d.Bucket}
	ctx, ref, commit := context.Background(), reposcope.DefaultOf(tenant), strings.TrimSpace(string(head))
	start := time.Now()
	h, err := githistory.Push(ctx, s3.Objects(), githistory.PushInput{Repo: ref, Dir: dir, Commit: commit, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pushed %s's history (%d commits) in %v", tenant, h.Manifest.Commits, time.Since(start).Round(time.Millisecond))
	pub, err := repo.Publish(ctx, s3.Objects(), repo.PublishInput{Repo: ref, Commit: "scale-" + filepath.Base(dir), Git: commit,
		Dir: dir, Paths: paths, MaxBytes: 4 << 30, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return pub.Pointer
}

// timedCall makes one call through the agent's path and returns how
// long it took, what it answered (ok, with the index's state when the
// answer has one, or the error code) and whether the answer is whole: ok,
// not incomplete, and of an index that is ready.
func timedCall(t *testing.T, api *deploytest.AgentAPI, tool, args, tenant string) (time.Duration, string, bool) {
	t.Helper()
	a, took := api.Call(t, tool, args, tenant)
	if a.Code != "" {
		return took, a.Code, false
	}
	var o struct {
		Index *struct {
			State                    string
			FilesIndexed, FilesTotal int
			FilesParsed              int // find_symbols' count
		}
		Incomplete bool
	}
	json.Unmarshal(a.Result, &o) //nolint:errcheck // a result without these fields is whole
	switch {
	case o.Incomplete:
		return took, "ok, incomplete", false
	case o.Index != nil:
		return took, fmt.Sprintf("ok, index %s %d/%d files", o.Index.State, max(o.Index.FilesIndexed, o.Index.FilesParsed), o.Index.FilesTotal), o.Index.State == "ready"
	}
	return took, "ok", true
}

// logProgress logs the build's progress and the queue every interval
// until the returned function is called, and saves the indexer
// functions' output into TOOLSHED_SCALE_LOGS when it is set.
func logProgress(t *testing.T, d *deployment, f *deploytest.FanOut, tenant string, every time.Duration) func() {
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			b, _, _ := f.Store.Build(context.Background(), tenant, "")
			a, _ := d.Moto.SQS().GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(f.Queue.URL),
				AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
			var visible, invisible string
			if a != nil {
				visible, invisible = a.Attributes["ApproximateNumberOfMessages"], a.Attributes["ApproximateNumberOfMessagesNotVisible"]
			}
			var embedded int64
			if f.Embed != nil {
				embedded = f.Embed.Requests.Load()
			}
			t.Logf("progress: %d of %d batches done; queue %s visible, %s in flight; %d events, %d failed; %d texts embedded",
				len(b.Done), b.Batches, visible, invisible, f.Source.Events.Load(), f.Source.Failed.Load(), embedded)
			if logs, _ := scaleLogs.Get(os.Getenv); logs != "" {
				saveOutputs(t, f, logs)
			}
		}
	}()
	return func() { close(done) }
}

// saveOutputs writes the output of the indexer and of each worker
// environment running into dir.
func saveOutputs(t *testing.T, f *deploytest.FanOut, dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "indexer.log"), []byte(f.Indexer.Output()), 0o644)
	for i, fn := range f.Workers.Running() {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("worker-%d.log", i)), []byte(fn.Output()), 0o644)
	}
}
