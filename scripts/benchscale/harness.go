package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/deploytest"
	"github.com/toolshed/toolshed/shared/testenv/embedtest"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
	"github.com/toolshed/toolshed/shared/testenv/latency"
	"github.com/toolshed/toolshed/shared/testenv/localrun"
	"github.com/toolshed/toolshed/shared/testenv/procstat"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/ripgrep"
)

// pushRow is what the harness measures of publishing and indexing one
// tree.
type pushRow struct {
	size     string
	t        tree
	load     string        // the 1-minute load average when the row started
	zip      int64         // the snapshot's zip bytes
	push     time.Duration // scripts/snapshot push, start to end
	index    time.Duration // from the snapshot's S3 event to the index published (searchable by words)
	embedded string        // seconds from the event to fully embedded; ">N (p%)" when not within N s; "-" not embedded
	cpu      time.Duration // the indexer's CPU time in it
	peak     int64         // the indexer's peak RSS
	chunks   string        // chunks the indexer logged, "-" when it did not say
	problem  string        // what failed, "" when nothing did
}

// toolRow is what the harness measures of one tool function on one tree.
type toolRow struct {
	size, tool       string
	memoryMB         int
	deadline         time.Duration
	init, cold       time.Duration // process start to ready; the first call
	coldCPU          time.Duration // CPU time of the first call
	warmP50, warmMax time.Duration
	peak             int64
	problem          string // failed calls, "" for none
}

// harnessTools are the repository tools measured through the harness.
var harnessTools = []string{"grep_codebase", "context_search", "read_file"}

// harnessOptions shape the harness's measures.
type harnessOptions struct {
	calls       int           // warm calls per tool
	embedWithin time.Duration // the longest wait for a tree's embedding (0: index by words only)
}

// harness is the deployed stack on this machine, shared by every size.
type harness struct {
	harnessOptions
	tb       testing.TB
	stack    *deploytest.Stack
	api      *deploytest.AgentAPI // the tools' calls go the way a remote agent's do
	snapshot string               // the scripts/snapshot binary
}

// newHarness builds the bootstraps and the snapshot CLI into dir and starts
// the emulators.
func newHarness(tb testing.TB, dir string, ho harnessOptions) (*harness, error) {
	if err := deploytest.BuildBootstraps(dir, "benchscale"); err != nil {
		return nil, err
	}
	snapshot, err := deploytest.BuildSnapshotCLI(dir)
	if err != nil {
		return nil, err
	}
	h := &harness{harnessOptions: ho, tb: tb, stack: deploytest.New(tb, dir), snapshot: snapshot}
	h.stack.S3(tb)
	h.api = h.stack.AgentAPI(tb, harnessTools)
	return h, nil
}

// tenant is the tenant whose repository the tree of a size is.
func tenant(size string) string { return "bench-" + size }

// publish pushes the tree with scripts/snapshot and runs the indexer on
// the snapshot's S3 event, as deployed.
func (h *harness) publish(size string, t tree) pushRow {
	r := pushRow{size: size, t: t, load: loadAverage(), chunks: "-", embedded: "-"}
	// A limit the tree fits in: the default one refuses large trees.
	maxMB := max(repo.DefaultMaxBytes>>20, 2*(t.bytes>>20)+1)
	cmd := h.stack.SnapshotPush(h.tb, h.snapshot, "-tenant", tenant(size), "-dir", t.dir, "-max-mb", fmt.Sprint(maxMB))
	t0 := time.Now()
	out, err := cmd.CombinedOutput()
	r.push = time.Since(t0)
	if err != nil {
		r.problem = fmt.Sprintf("push failed: %v: %s", err, strings.TrimSpace(string(out)))
		return r
	}
	s3 := repotest.S3{Moto: h.stack.Moto, Bucket: h.stack.Bucket}
	list, err := repo.List(context.Background(), s3.Objects(), reposcope.DefaultOf(tenant(size)))
	if err != nil {
		r.problem = fmt.Sprintf("list snapshots: %v", err)
		return r
	}
	for _, s := range list {
		if s.Current {
			r.zip = s.ZipBytes
		}
	}
	h.index(&r)
	return r
}

// Index workers as deployed (infra/indexer.go: the embed queue's share
// of the reserved concurrency embedding.IndexWorkers, the index queue's
// deploy.IndexBuildConcurrency, 300 s, the queues' visibility twice
// that), each at the vCPU share its memory buys.
const (
	indexWorkers       = embedding.IndexWorkers
	indexWorkerTimeout = 300 * time.Second
	indexBatchFiles    = 1000
	indexWithin        = time.Hour
)

// index runs the deployed indexing on the snapshot's S3 event — the
// indexer function plans batches on an SQS queue, index worker functions
// build them, then embed them with Titan V2's stand-in under the assumed
// default quota — and measures it: the time from the event to the
// publication (searchable by words) and to fully embedded (at most
// embedWithin), the CPU of the indexer and of the workers, the highest
// peak RSS of any of them (each has the indexer's memory setting).
func (h *harness) index(r *pushRow) {
	o := deploytest.FanOutOptions{
		BatchFiles: indexBatchFiles, Workers: indexWorkers, WorkerTimeout: indexWorkerTimeout,
		Visibility: 2 * indexWorkerTimeout, VCPU: lambdatest.VCPUOf(deploytest.IndexerMemoryMB),
	}
	if h.embedWithin > 0 {
		o.Embed = &embedtest.TitanOptions{Quota: embedding.TitanDefaultQuota, LatencyMedian: embedtest.TitanLatency, LatencySpread: embedtest.TitanLatencySpread}
	}
	f := h.stack.StartFanOut(h.tb, o)
	defer f.Workers.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), indexWithin)
	defer cancel()
	if _, err := f.Indexer.InitDuration(ctx); err != nil {
		r.problem = fmt.Sprintf("indexer init: %v", err)
		return
	}
	commit, err := currentCommit(h, r.size)
	if err != nil {
		r.problem = err.Error()
		return
	}
	t0 := time.Now()
	if err := f.Published(ctx, tenant(r.size)); err != nil {
		r.problem = err.Error()
		return
	}
	m, err := f.WaitPublished(ctx, tenant(r.size), commit)
	r.index = time.Since(t0)
	if err != nil {
		r.problem = fmt.Sprintf("not indexed: %v", err)
		return
	}
	r.chunks = fmt.Sprint(indexfile.Totals(m.Parts).Chunks)
	if h.embedWithin > 0 {
		r.embedded = h.embedding(f, tenant(r.size), commit, t0)
	}
	r.cpu, _ = procstat.CPUTime(f.Indexer.Pid())
	for _, fn := range f.Workers.Running() {
		c, _ := procstat.CPUTime(fn.Pid())
		r.cpu += c
	}
	r.peak, _ = f.Indexer.PeakRSS()
	r.peak = max(r.peak, f.Workers.PeakRSS())
}

// embedding waits at most embedWithin for the index of commit to be
// fully embedded and says when it was, in seconds from t0, or how far it
// is: ">N (p%)".
func (h *harness) embedding(f *deploytest.FanOut, tenant, commit string, t0 time.Time) string {
	ctx, cancel := context.WithTimeout(context.Background(), h.embedWithin)
	defer cancel()
	if _, err := f.WaitEmbedded(ctx, tenant, commit); err == nil {
		return fmt.Sprintf("%.1f", time.Since(t0).Seconds())
	}
	p, _, err := f.Store.Pointer(context.Background(), tenant, "")
	if err != nil || p.Chunks == 0 {
		return fmt.Sprintf(">%.0f", time.Since(t0).Seconds())
	}
	return fmt.Sprintf(">%.0f(%d%%)", time.Since(t0).Seconds(), p.Embedded*100/p.Chunks)
}

// currentCommit is the commit of the tree's current snapshot.
func currentCommit(h *harness, size string) (string, error) {
	s3 := repotest.S3{Moto: h.stack.Moto, Bucket: h.stack.Bucket}
	p, ok, err := repo.ReadPointer(context.Background(), s3.Objects(), reposcope.DefaultOf(tenant(size)))
	if err != nil || !ok {
		return "", fmt.Errorf("read the snapshot pointer: %v (found: %v)", err, ok)
	}
	return p.Commit, nil
}

// measureTool runs a fresh function of tool, reading the tree's snapshot,
// and measures its start, its first (cold) call and its warm calls, each
// call made through the agent's path (the HTTP API, the authorizer, the
// gateway).
func (h *harness) measureTool(size, tool string, t tree) toolRow {
	cfg := h.stack.ToolConfig(h.tb, tool)
	cfg.Env[config.RateLimits.Name()] = localrun.UnlimitedRates(tool)
	cfg.VCPU = lambdatest.VCPUOf(cfg.MemoryMB) // as Lambda gives it, init included
	c, _ := h.stack.Contracts.Get(tool)
	r := toolRow{size: size, tool: tool, memoryMB: cfg.MemoryMB, deadline: time.Duration(c.TimeoutMs) * time.Millisecond}
	fn := h.stack.Start(h.tb, cfg)
	defer fn.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var err error
	if r.init, err = fn.InitDuration(ctx); err != nil {
		r.problem = fmt.Sprintf("init: %v", err)
		return r
	}
	args := toolArgs(tool, t, h.calls+1)
	var problems []string
	call := func(i int) time.Duration {
		a, took := h.api.Call(h.tb, tool, args[i], tenant(size))
		if a.Code != "" {
			problems = append(problems, fmt.Sprintf("call %d: %s", i, a.Code))
		}
		return took
	}
	before, _ := procstat.CPUTime(fn.Pid())
	r.cold = r.init + call(0) // Lambda runs the init when the call arrives
	after, _ := procstat.CPUTime(fn.Pid())
	r.coldCPU = after - before
	var warm []time.Duration
	for i := 1; i <= h.calls; i++ {
		warm = append(warm, call(i))
	}
	r.warmP50, r.warmMax = latency.Percentile(warm, 50), latency.Percentile(warm, 100)
	r.peak, _ = fn.PeakRSS()
	r.problem = strings.Join(problems, "; ")
	return r
}

// toolArgs are n calls' arguments for tool, in turn over its usual
// inputs: grep's classes, context_search's queries, read_file on files of
// the tree spread over it.
func toolArgs(tool string, t tree, n int) []string {
	var inputs []any
	switch tool {
	case "grep_codebase":
		for _, c := range ripgrep.Classes {
			inputs = append(inputs, c.Args())
		}
	case "context_search":
		for _, q := range queries {
			inputs = append(inputs, contextSearchArgs(q))
		}
	case "read_file":
		for _, p := range t.sample(10) {
			inputs = append(inputs, map[string]any{"path": p})
		}
	}
	out := make([]string, n)
	for i := range out {
		b, _ := json.Marshal(inputs[i%len(inputs)]) // maps of strings, numbers and booleans
		out[i] = string(b)
	}
	return out
}
