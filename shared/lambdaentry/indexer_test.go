package lambdaentry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/deploytest"
	"github.com/toolshed/toolshed/shared/testenv/embedtest"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// published invokes the indexer with the S3 event of the snapshot
// pointer of the repository whose folder is repoKey being written.
func published(t testing.TB, f *deploytest.FanOut, repoKey string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := f.Published(ctx, repoKey); err != nil {
		t.Fatal(err)
	}
}

// waitPublished waits until the index pointer of the repository whose
// folder is repoKey names commit.
func waitPublished(t testing.TB, f *deploytest.FanOut, repoKey, commit string, within time.Duration) indexfile.Manifest {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	m, err := f.WaitPublished(ctx, repoKey, commit)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// logLine is a JSON log line of the indexer.
type logLine struct {
	Msg     string
	Part    string
	Vectors int
	Resumed int
}

// logLines parses a function's JSON log lines.
func logLines(output string) []logLine {
	var out []logLine
	for _, line := range strings.Split(output, "\n") {
		var l logLine
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg != "" {
			out = append(out, l)
		}
	}
	return out
}

// midBatch returns the part a worker's output shows it working on with a
// checkpoint saved, and that checkpoint's vectors ("" when none).
func midBatch(output string) (part string, vectors int) {
	for _, l := range logLines(output) {
		switch l.Msg {
		case "indexer: embed round started":
			part, vectors = l.Part, 0
		case "indexer: checkpoint saved":
			vectors = l.Vectors
		case "indexer: embed round":
			part = ""
		}
	}
	if vectors == 0 {
		part = ""
	}
	return part, vectors
}

// TestIndexerFanOut is the acceptance test of the deployed indexing: a
// tree of a few hundred files is indexed through the fan-out — the real
// indexer bootstrap plans it into batches on an SQS queue, worker
// bootstraps build them — against the Titan V2 stand-in (one text a
// request) answering in about 20 ms under a quota of 200 requests a
// second, which the workers, unpaced, exceed and are throttled; a worker is killed
// mid-batch, and the batch is delivered again after the visibility
// timeout to a new environment, which resumes from the checkpoint. The
// index is published as soon as its parts are built, then embedded part
// by part within the time budget, every chunk with its vector, and context_search says how far the build is while it runs and
// searches it when it is done.
func TestIndexerFanOut(t *testing.T) {
	d := newDeployment(t)
	f := d.StartFanOut(t, deploytest.FanOutOptions{
		Embed: &embedtest.TitanOptions{Quota: embedding.Pace{RequestsPerMinute: 12000}, LatencyMedian: 20 * time.Millisecond, LatencySpread: embedtest.TitanLatencySpread},
		Pace:  &embedding.Pace{},
		// The queue's visibility timeout is at least the function's, as
		// Lambda requires of a mapping (a batch is never run twice at once).
		BatchFiles: 40, Workers: 2, WorkerTimeout: 3 * time.Second, Visibility: 3 * time.Second,
	})
	dir := repotest.GoPackages(t, "go/types", "net/http", "encoding/json", "go/ast", "text/template", "strings",
		"regexp/syntax", "sort", "go/token", "go/printer", "bytes", "net/url", "go/parser", "os")
	files := len(repotest.Files(t, dir))
	(&repotest.S3{Moto: d.Moto, Bucket: d.Bucket}).Publish(t, "acme", "c1", dir)
	search := d.Start(t, searchConfig(t, d, f.Embed))

	start := time.Now()
	published(t, f, "acme")
	rec, _, err := f.Store.Build(context.Background(), "acme", "")
	if err != nil || rec.Batches < 5 || rec.Files != files || !rec.Queued {
		t.Fatalf("planned: %+v, %v (%d files)", rec, err, files)
	}
	// While the build runs, context_search says so.
	out := contextSearch(t, search, `{"query":"type checker"}`)
	if out.Index == nil || out.Index.State != "building" || out.Index.Build == nil || out.Index.Build.Batches != rec.Batches {
		t.Errorf("during the build: %+v", out)
	}

	// Kill a worker that has checkpointed a batch it has not finished.
	var killed *lambdatest.Function
	var killedPart string
	var killedVectors int
	for deadline := time.Now().Add(30 * time.Second); killed == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, fn := range f.Workers.Running() {
			if part, _ := midBatch(fn.Output()); part != "" {
				fn.Kill()
				<-fn.Exited()
				// It may have finished the batch between the look and the kill.
				if killedPart, killedVectors = midBatch(fn.Output()); killedPart != "" {
					killed = fn
				}
				break
			}
		}
	}
	if killed == nil {
		t.Fatal("no worker was seen mid-batch with a checkpoint")
	}
	m := waitPublished(t, f, "acme", "c1", time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, err = f.WaitEmbedded(ctx, "acme", "c1")
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)

	total := indexfile.Totals(m.Parts)
	if len(m.Parts) != rec.Batches || total.Files != files || total.Vectors != total.Chunks || total.Failed != 0 || m.Model != titanModel {
		t.Errorf("published: %d parts of %d batches, %+v", len(m.Parts), rec.Batches, total)
	}
	resumed := false
	for _, fn := range f.Workers.Running() {
		for _, l := range logLines(fn.Output()) {
			resumed = resumed || l.Msg == "indexer: embed round started" && l.Part == killedPart && l.Resumed >= killedVectors
		}
	}
	if !resumed {
		t.Errorf("no worker resumed %s from its checkpoint of %d vectors", killedPart, killedVectors)
	}
	// Resumed, not restarted: texts embedded again are at most those in
	// flight or embedded since the checkpoint when the worker was killed.
	if again := f.Embed.Requests.Load() - int64(total.Embedded); again > int64(total.Embedded/4) {
		t.Errorf("%d texts embedded for %d: %d twice", f.Embed.Requests.Load(), total.Embedded, again)
	}
	if f.Embed.Throttled.Load() == 0 || f.EmbedSource.Failed.Load() == 0 || f.Workers.Started() <= 2 {
		t.Errorf("%d requests throttled, %d embed events failed, %d environments started: the test does not test what it says",
			f.Embed.Throttled.Load(), f.EmbedSource.Failed.Load(), f.Workers.Started())
	}
	if took > time.Minute {
		t.Errorf("indexing took %v", took)
	}
	t.Logf("%d files, %d chunks in %d batches: embedded in %v; %d texts embedded (%.1f requests/s), %d throttled; %d events, %d failed, %d environments",
		files, total.Chunks, len(m.Parts), took.Round(time.Millisecond), f.Embed.Requests.Load(),
		float64(f.Embed.Requests.Load())/took.Seconds(), f.Embed.Throttled.Load(), f.Source.Events.Load(), f.Source.Failed.Load(), f.Workers.Started())

	// context_search searches the new index, hybrid.
	out = contextSearch(t, search, `{"query":"type checker"}`)
	if out.Index == nil || out.Index.State != "ready" || out.Index.Commit != "c1" || out.Index.Chunks != total.Chunks ||
		out.Index.Vectors != total.Chunks || out.Mode != "hybrid" || len(out.Results) == 0 {
		t.Errorf("after the build: %+v, index %+v", out, out.Index)
	}
	if !strings.Contains(strings.Join(workerOutputs(f), ""), `"`+indexer.MetricPublished+`":1`) {
		t.Error("no worker wrote the metric of the publication")
	}
}

// TestIndexerEmbedsAfterPublishing: deployed, with Titan V2 (its stand-in,
// under a small quota the workers are paced within, as an operator sets
// them for the account's quota), a pushed snapshot is searchable by its
// words as soon as its parts are built, whatever its embedding: while the
// quota is spent by other callers, context_search answers lexically with
// the one notice that says exactly how much is embedded; once the quota
// is back, the parts are embedded and the search is by meaning.
func TestIndexerEmbedsAfterPublishing(t *testing.T) {
	d := newDeployment(t)
	quota := embedding.Pace{RequestsPerMinute: 3000, TokensPerMinute: 1e6}
	const workers = 2
	f := d.StartFanOut(t, deploytest.FanOutOptions{
		Embed: &embedtest.TitanOptions{Quota: quota, LatencyMedian: 10 * time.Millisecond, LatencySpread: embedtest.TitanLatencySpread},
		Pace: &embedding.Pace{RequestsPerMinute: quota.RequestsPerMinute * embedding.PaceHeadroom / workers,
			TokensPerMinute: quota.TokensPerMinute * embedding.PaceHeadroom / workers},
		BatchFiles: 2, Workers: workers, WorkerTimeout: 5 * time.Second, Visibility: 5 * time.Second,
	})
	(&repotest.S3{Moto: d.Moto, Bucket: d.Bucket}).Publish(t, "acme", "c1", repotest.GoPackages(t, "container/list", "container/ring", "container/heap"))
	search := d.Start(t, searchConfig(t, d, f.Embed))

	f.Embed.Spent.Store(true)
	published(t, f, "acme")
	m := waitPublished(t, f, "acme", "c1", time.Minute)
	chunks := indexfile.Totals(m.Parts).Chunks
	out := contextSearch(t, search, `{"query":"ring of elements"}`)
	want := fmt.Sprintf("Semantic: 0%% of code chunks embedded (0 of %d; %d are still being embedded): results are ranked by meaning among those, and lexically for the rest.", chunks, chunks)
	if out.Index == nil || out.Index.Commit != "c1" || out.Index.Chunks != chunks || out.Index.Vectors != 0 || out.Index.Pending != chunks ||
		out.Mode != "lexical" || out.Notice != want || len(out.Results) == 0 || !strings.HasPrefix(out.Results[0].ID, "container/ring/") {
		t.Errorf("published, not embedded: %+v, index %+v; want the notice %q", out, out.Index, want)
	}

	f.Embed.Spent.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := f.WaitEmbedded(ctx, "acme", "c1"); err != nil {
		t.Fatal(err)
	}
	// The function revalidates the pointer every few seconds.
	for ; ctx.Err() == nil && out.Index.Vectors < chunks; time.Sleep(200 * time.Millisecond) {
		out = contextSearch(t, search, `{"query":"ring of elements"}`)
	}
	if out.Index.Vectors != chunks || out.Index.Pending != 0 || out.Mode != "hybrid" || out.Notice != "" || len(out.Results) == 0 {
		t.Errorf("embedded: %+v, index %+v", out, out.Index)
	}
	if f.Embed.Requests.Load() < int64(chunks) || f.Embed.Throttled.Load() == 0 {
		t.Errorf("%d requests answered for %d chunks, %d throttled", f.Embed.Requests.Load(), chunks, f.Embed.Throttled.Load())
	}
}

// TestIndexerBuildsWhileEmbedding: deployed, a push's batches never wait
// behind the embedding of earlier pushes (which takes hours at scale,
// paced within the quota): while the quota is spent by other callers and
// acme's embed messages go round their queue, beta's push is built and
// its index published by its words, its batches the only messages of the
// index queue.
func TestIndexerBuildsWhileEmbedding(t *testing.T) {
	d := newDeployment(t)
	f := d.StartFanOut(t, deploytest.FanOutOptions{
		Embed:      &embedtest.TitanOptions{Quota: embedding.Pace{RequestsPerMinute: 3000, TokensPerMinute: 1e6}},
		BatchFiles: 2, Workers: 2, WorkerTimeout: 5 * time.Second, Visibility: 5 * time.Second,
	})
	s3 := &repotest.S3{Moto: d.Moto, Bucket: d.Bucket}
	s3.Publish(t, "acme", "c1", repotest.GoPackages(t, "container/list", "container/ring", "container/heap"))
	s3.Publish(t, "beta", "b1", repotest.GoPackages(t, "unicode/utf8", "unicode/utf16"))

	f.Embed.Spent.Store(true)
	published(t, f, "acme")
	waitPublished(t, f, "acme", "c1", time.Minute)
	// acme's embed rounds are under way, throttled.
	for deadline := time.Now().Add(time.Minute); f.Embed.Throttled.Load() == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no embed round asked Titan")
		}
	}
	published(t, f, "beta")
	waitPublished(t, f, "beta", "b1", time.Minute)

	var batches int
	for _, key := range []string{"acme", "beta"} {
		rec, _, err := f.Store.Build(context.Background(), key, "")
		if err != nil || rec.State != indexfile.BuildPublished {
			t.Fatalf("%s: build %+v, %v", key, rec, err)
		}
		batches += rec.Batches
	}
	acme, _, _ := f.Store.Pointer(context.Background(), "acme", "")
	if acme.Pending == 0 || f.Embed.Throttled.Load() == 0 {
		t.Errorf("acme embedded (pointer %+v, %d requests throttled): the test does not test what it says", acme, f.Embed.Throttled.Load())
	}
	if n := f.Source.Events.Load(); n != int64(batches) || f.Source.Failed.Load() != 0 {
		t.Errorf("the index queue delivered %d events (%d failed) for %d batches: embed messages were in the way", n, f.Source.Failed.Load(), batches)
	}
}

// TestIndexerLatePlan: acme pushes c1, and the plan of c1 runs in an
// environment of the indexer whose S3 reads of c1's zip are held back (by
// a proxy) until c2 has been pushed and planned in another environment.
// Going on, c1's plan leaves c2's build record alone (it does not drop
// c2's batches, which the workers are building); c2 is the index
// published, never c1.
func TestIndexerLatePlan(t *testing.T) {
	d := newDeployment(t)
	f := d.StartFanOut(t, deploytest.FanOutOptions{BatchFiles: 1, Workers: 2, WorkerTimeout: time.Minute, Visibility: time.Minute})
	dir := repotest.GoPackages(t, "container/list", "container/ring", "container/heap")
	s3 := &repotest.S3{Moto: d.Moto, Bucket: d.Bucket}
	s3.Publish(t, "acme", "c1", dir)

	proxy := emulator.StartProxy(t, d.Moto.Endpoint)
	held, hold := make(chan struct{}), make(chan struct{})
	release := sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release) // before the proxy stops
	c1 := "/" + repo.ZipKey(reposcope.DefaultOf("acme"), "c1")
	proxy.Hold(1, func(r *http.Request) bool {
		if !strings.HasSuffix(r.URL.Path, c1) {
			return false
		}
		close(held)
		<-hold // the proxy passes on nothing meanwhile: it serves the late environment only
		return true
	}, 0)
	late := f.StartIndexer(t, proxy.URL())
	planned := make(chan error, 1)
	go func() { planned <- deploytest.PublishedTo(context.Background(), late, "acme") }()
	select {
	case <-held:
	case err := <-planned:
		t.Fatalf("c1's plan did not read c1's zip: %v", err)
	}

	os.WriteFile(filepath.Join(dir, "container", "list", "new.go"), []byte("package list\n\n// Newer is new in c2.\nfunc Newer() {}\n"), 0o644)
	s3.Publish(t, "acme", "c2", dir)
	published(t, f, "acme")
	release()
	if err := <-planned; err != nil {
		t.Fatal(err)
	}
	if rec, _, err := f.Store.Build(context.Background(), "acme", ""); err != nil || rec.Commit != "c2" {
		t.Fatalf("after c1's late plan: build record %+v, %v\n%s", rec, err, late.Output())
	}
	m := waitPublished(t, f, "acme", "c2", time.Minute)
	rec, _, err := f.Store.Build(context.Background(), "acme", "")
	if err != nil || rec.Commit != "c2" || rec.State != indexfile.BuildPublished || m.SnapshotSeq != rec.SnapshotSeq || indexfile.Totals(m.Parts).Files != 4 {
		t.Errorf("c2 published: record %+v, %v; manifest %+v", rec, err, m)
	}
}

// workerOutputs returns the output of the worker environments running.
func workerOutputs(f *deploytest.FanOut) []string {
	var out []string
	for _, fn := range f.Workers.Running() {
		out = append(out, fn.Output())
	}
	return out
}

// titanModel is the deployed embedder's model: Titan V2 at its default
// dimensions.
var titanModel = fmt.Sprintf("%s/%d", embedding.TitanV2, embedding.DefaultTitanDimensions)

// searchConfig is context_search's function as deployed, embedding its
// queries with Titan V2's stand-in.
func searchConfig(t testing.TB, d *deployment, embed *embedtest.Titan) lambdatest.Config {
	cfg := d.ToolConfig(t, "context_search")
	embed.Configure(cfg.Env, embedding.DefaultTitanDimensions)
	return cfg
}

// searchOutput is what the tests read of context_search's answer.
type searchOutput struct {
	Mode    string
	Notice  string
	Results []struct{ ID string }
	Index   *struct {
		State                    string
		FilesIndexed, FilesTotal int
		Chunks, Vectors, Pending int
		Commit                   string
		Build                    *struct{ Batches, BatchesDone int }
	}
}

// contextSearch calls context_search for acme.
func contextSearch(t testing.TB, fn *lambdatest.Function, args string) searchOutput {
	t.Helper()
	resp := invoke(t, fn, directEvent("context_search", args, "acme", "search"))
	var o struct {
		OK     bool
		Result searchOutput
	}
	if err := json.Unmarshal(resp.Payload, &o); err != nil || !o.OK {
		t.Fatalf("context_search: %s", resp.Payload)
	}
	return o.Result
}
