package lambdaentry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/testenv/deploytest"
	"github.com/toolshed/toolshed/shared/testenv/embedtest"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestCostMeasure's settings (make cost-measure sets them).
var (
	costOut = settings.New("TOOLSHED_COST_MEASURE", "",
		"the file TestCostMeasure writes (scripts/cost/measured.json; none: it is skipped)", settings.Text)
	costTree = settings.New("TOOLSHED_COST_TREE", "",
		"the folder TestCostMeasure publishes and indexes (none: a few packages of the Go tree)", settings.Text)
)

// costCalls are the calls TestCostMeasure makes of each tool the cost
// model prices: a call that does the tool's usual work on the tree.
var costCalls = []struct{ tool, args string }{
	{"grep_codebase", `{"pattern":"func New[A-Z]"}`},
	{"read_file", `{"path":"net/url/url.go"}`},
	{"list_files", `{"patterns":["**/*.go"]}`},
	{"find_symbols", `{"name":"Parse"}`},
	{"context_search", `{"query":"parse a URL"}`},
	{"add_task", `{"title":"measure"}`},
	{"list_tasks", `{}`},
}

// costWarmCalls is how many warm calls of each tool are averaged.
const costWarmCalls = 20

// TestCostMeasure measures what the cost model (scripts/cost) reads, as
// the harness can: a snapshot indexed through the fan-out (the indexer and
// worker bootstraps, the Titan V2 stand-in at the deployed dimensions),
// then each tool's function cold and warm, direct as the gateway invokes
// it; every S3, SQS and DynamoDB request counted by a proxy in front of
// the emulators. It writes the figures as JSON. It runs only when
// TOOLSHED_COST_MEASURE names the file (make cost-measure, not make test).
func TestCostMeasure(t *testing.T) {
	out, _ := costOut.Get(os.Getenv)
	if out == "" {
		t.Skip(costOut.Name() + " names no file to write")
	}
	d := newDeployment(t)
	d.S3(t)
	requests := &requestCounter{}
	d.Moto.Endpoint = requests.proxy(t, d.Moto.Endpoint)
	d.Dynamo.Endpoint = requests.proxy(t, d.Dynamo.Endpoint)

	dir, _ := costTree.Get(os.Getenv)
	if dir == "" {
		dir = repotest.GoPackages(t, "net/url", "net/http", "strings", "bytes", "encoding/json", "go/ast", "go/parser", "sort")
	}
	m := deploy.Measured{Date: time.Now().UTC().Format("2006-01-02"), Tree: treeName(dir), Commit: "c1",
		Command: "make cost-measure", Tools: map[string]deploy.ToolFigures{}}
	f := startCostFanOut(t, d)
	titan := f.Embed
	m.FirstBuild = measureBuild(t, d, f, requests, dir, "c1")
	m.Build = measureBuild(t, d, f, requests, dir, "c2") // a push: every vector reused
	for _, c := range costCalls {
		cfg := d.ToolConfig(t, c.tool)
		if c.tool == "context_search" {
			titan.Configure(cfg.Env, embedding.DefaultTitanDimensions) // as deployed
		}
		args := c.args
		if c.tool == "read_file" {
			args = readArgs(t, dir)
		}
		tokens := titan.Tokens.Load()
		fig := measureFunction(t, d, requests, cfg, directEvent(c.tool, args, "acme", "cost"))
		fig.EmbedTokens = float64(titan.Tokens.Load()-tokens) / (costWarmCalls + 1)
		m.Tools[c.tool] = fig
	}
	key, _ := keys(t, d)
	event := strings.ReplaceAll(string(fixture(t, "authorizer-request.json")), "KEY_PLACEHOLDER", key)
	m.Authorizer = measureFunction(t, d, requests, d.AuthorizerConfig(), []byte(event))
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", out)
}

// startCostFanOut starts the indexer and two index workers as deployed
// (the deployed batch size, timeout and Titan's dimensions).
func startCostFanOut(t *testing.T, d *deployment) *deploytest.FanOut {
	t.Helper()
	batchFiles, err := indexer.BatchFiles.Get(func(string) string { return "" }) // the deployed default
	if err != nil {
		t.Fatal(err)
	}
	return d.StartFanOut(t, deploytest.FanOutOptions{
		Embed:      &embedtest.TitanOptions{Quota: embedding.Pace{RequestsPerMinute: 60000}},
		Pace:       &embedding.Pace{},
		BatchFiles: batchFiles, Workers: 2,
		WorkerTimeout: deploy.IndexWorkerTimeoutSeconds * time.Second, Visibility: deploy.IndexWorkerTimeoutSeconds * time.Second,
	})
}

// measureBuild publishes dir as commit and measures its build, from the
// indexer's event to fully embedded.
func measureBuild(t *testing.T, d *deployment, f *deploytest.FanOut, requests *requestCounter, dir, commit string) deploy.BuildFigures {
	t.Helper()
	logged := map[*lambdatest.Function]int{}
	for _, fn := range append(f.Workers.Running(), f.Indexer) {
		logged[fn] = len(fn.Output())
	}
	embedded, tokens := f.Embed.Requests.Load(), f.Embed.Tokens.Load()
	(&repotest.S3{Moto: d.Moto, Bucket: d.Bucket}).Publish(t, "acme", commit, dir)
	before := requests.snapshot()
	started := time.Now()
	published(t, f, "acme")
	b := deploy.BuildFigures{IndexerMs: float64(time.Since(started).Milliseconds())}
	waitPublished(t, f, "acme", commit, 10*time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	man, err := f.WaitEmbedded(ctx, "acme", commit)
	if err != nil {
		t.Fatal(err)
	}
	n := requests.since(before)
	for _, p := range man.Parts {
		b.Files, b.Chunks = b.Files+p.Files, b.Chunks+p.Chunks
	}
	b.Parts = len(man.Parts)
	for _, p := range repotest.Files(t, dir) {
		if st, err := os.Stat(filepath.Join(dir, p)); err == nil {
			b.Bytes += st.Size()
		}
	}
	written := map[string]bool{}
	for _, fn := range f.Workers.Running() {
		b.LogBytes += len(fn.Output()) - logged[fn]
		b.WorkerMs += workerMs(fn.Output()[logged[fn]:])
		emfMetrics(fn.Output(), written)
	}
	b.Metrics = len(written)
	b.LogBytes += len(f.Indexer.Output()) - logged[f.Indexer]
	b.S3Gets, b.S3Puts, b.S3GetBytes, b.S3PutBytes = n["s3:GET"], n["s3:PUT"], n["s3:GET:bytes"], n["s3:PUT:bytes"]
	b.SQSRequests, b.SQSSends = n["sqs"], n["sqs:send"]
	b.EmbedRequests, b.EmbedTokens = int(f.Embed.Requests.Load()-embedded), int(f.Embed.Tokens.Load()-tokens)
	return b
}

// workerMs is the time an index worker's output says it worked: its parts
// built and its embed rounds (the harness keeps no invocation's duration).
func workerMs(output string) float64 {
	var ms float64
	for _, line := range strings.Split(output, "\n") {
		var l struct {
			Msg        string  `json:"msg"`
			DurationMs float64 `json:"duration_ms"`
			Round      float64 `json:"IndexRoundSeconds"`
		}
		if json.Unmarshal([]byte(line), &l) != nil {
			continue
		}
		if l.Msg == "indexer: part built" {
			ms += l.DurationMs
		}
		ms += l.Round * 1000
	}
	return ms
}

// measureFunction starts the function of cfg and invokes it with event once
// cold and costWarmCalls times warm.
func measureFunction(t *testing.T, d *deployment, requests *requestCounter, cfg lambdatest.Config, event []byte) deploy.ToolFigures {
	t.Helper()
	fn := d.Start(t, cfg)
	ctx := context.Background()
	initTook, err := fn.InitDuration(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fig := deploy.ToolFigures{MemoryMB: cfg.MemoryMB, InitMs: ms(initTook), RequestBytes: len(event)}
	started := time.Now()
	resp := invoke(t, fn, event)
	fig.ColdMs = ms(time.Since(started))
	if resp.FunctionError != "" || bytes.Contains(resp.Payload, []byte(`"ok":false`)) {
		t.Errorf("%s: %s", cfg.Name, resp.Payload)
	}
	logged, before := len(fn.Output()), requests.snapshot()
	started = time.Now()
	for range costWarmCalls {
		fig.ResponseBytes = len(invoke(t, fn, event).Payload)
	}
	fig.WarmMs = ms(time.Since(started)) / costWarmCalls
	fig.LogBytes = (len(fn.Output()) - logged) / costWarmCalls
	written := map[string]bool{}
	emfMetrics(fn.Output(), written)
	fig.Metrics = len(written)
	n := requests.since(before)
	per := func(k string) float64 { return float64(n[k]) / costWarmCalls }
	fig.DynamoReads, fig.DynamoWrites = per("dynamodb:read"), per("dynamodb:write")
	fig.S3Gets, fig.S3Puts, fig.S3GetBytes = per("s3:GET"), per("s3:PUT"), per("s3:GET:bytes")
	return fig
}

// emfMetrics adds to names the metrics (namespace, name and dimension
// names: what CloudWatch bills as one) the EMF lines of output write.
func emfMetrics(output string, names map[string]bool) {
	for _, line := range strings.Split(output, "\n") {
		var l struct {
			AWS struct {
				CloudWatchMetrics []struct {
					Namespace  string
					Dimensions [][]string
					Metrics    []struct{ Name string }
				}
			} `json:"_aws"`
		}
		if json.Unmarshal([]byte(line), &l) != nil {
			continue
		}
		for _, d := range l.AWS.CloudWatchMetrics {
			for _, m := range d.Metrics {
				names[fmt.Sprint(d.Namespace, m.Name, d.Dimensions)] = true
			}
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// readArgs are read_file's arguments: the tree's first Go file.
func readArgs(t *testing.T, dir string) string {
	files := repotest.Files(t, dir)
	path := files[0]
	for _, f := range files {
		if strings.HasSuffix(f, ".go") {
			path = f
			break
		}
	}
	b, _ := json.Marshal(map[string]string{"path": path})
	return string(b)
}

// treeName names the measured tree in the file: its folder's base, or
// "Go packages" for the default.
func treeName(dir string) string {
	if v, _ := costTree.Get(os.Getenv); v == "" {
		return "a few packages of the Go tree (" + runtime.Version() + ")"
	}
	out, err := exec.Command("git", "-C", dir, "describe", "--always", "--dirty").Output()
	if err != nil {
		return filepath.Base(dir)
	}
	return filepath.Base(dir) + " at " + strings.TrimSpace(string(out))
}

// requestCounter counts the requests its proxies pass to the emulators,
// by what AWS bills them as.
type requestCounter struct {
	mu sync.Mutex
	n  map[string]int64
}

// proxy starts a proxy to target that counts; it returns its URL.
func (c *requestCounter) proxy(t *testing.T, target string) string {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ModifyResponse = func(r *http.Response) error {
		c.count(r.Request, r.ContentLength)
		return nil
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

func (c *requestCounter) count(r *http.Request, answered int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int64{}
	}
	target := r.Header.Get("X-Amz-Target")
	op := target[strings.LastIndex(target, ".")+1:]
	switch {
	case strings.HasPrefix(target, "DynamoDB"):
		kind := "dynamodb:write"
		if strings.HasPrefix(op, "Get") || strings.HasPrefix(op, "Query") || strings.HasPrefix(op, "Scan") || strings.HasPrefix(op, "BatchGet") {
			kind = "dynamodb:read"
		}
		c.n[kind]++
	case strings.HasPrefix(target, "AmazonSQS"):
		c.n["sqs"]++
		if strings.HasPrefix(op, "Send") {
			c.n["sqs:send"]++
		}
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		if r.URL.Query().Has("list-type") {
			c.n["s3:PUT"]++ // a LIST is billed as a PUT
			return
		}
		c.n["s3:GET"]++
		c.n["s3:GET:bytes"] += max(answered, 0)
	case r.Method == http.MethodPut || r.Method == http.MethodPost:
		c.n["s3:PUT"]++
		c.n["s3:PUT:bytes"] += max(r.ContentLength, 0)
	}
}

func (c *requestCounter) snapshot() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// since is what was counted since before (a snapshot).
func (c *requestCounter) since(before map[string]int64) map[string]int64 {
	out := c.snapshot()
	for k, v := range before {
		out[k] -= v
	}
	return out
}
