package localserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/httpapi"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
	"github.com/toolshed/toolshed/shared/testenv/dynamotest"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// serverBinary builds the gateway binary (what `make run` runs) once per
// test process.
var serverBinary = sync.OnceValues(func() (string, error) {
	root, err := dynamotest.RepoRoot()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "toolshed-server-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "toolshed")
	cmd := exec.Command("go", "build", "-o", bin, "./functions/gateway")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the server: %v\n%s", err, out)
	}
	return bin, nil
})

// serverProcess is the local server running as a process of its own.
type serverProcess struct {
	bin  string
	env  []string
	addr string
	cmd  *exec.Cmd
	logs *bytes.Buffer
	mu   sync.Mutex
}

// startProcess runs the server with env (TOOLSHED_* settings) on a free
// port and waits until it answers.
func startProcess(t *testing.T, env map[string]string) *serverProcess {
	t.Helper()
	bin, err := serverBinary()
	if err != nil {
		t.Fatal(err)
	}
	port, err := emulator.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &serverProcess{bin: bin, addr: fmt.Sprintf("127.0.0.1:%d", port)}
	s.env = append(os.Environ(), "TOOLSHED_ADDR="+s.addr, "AWS_ACCESS_KEY_ID=dummy", "AWS_SECRET_ACCESS_KEY=dummy",
		"AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true")
	for k, v := range env {
		s.env = append(s.env, k+"="+v)
	}
	s.start(t)
	t.Cleanup(s.kill)
	return s
}

func (s *serverProcess) start(t *testing.T) {
	t.Helper()
	s.cmd = exec.Command(s.bin)
	s.cmd.Env = s.env
	s.logs = &bytes.Buffer{}
	s.cmd.Stdout, s.cmd.Stderr = &lockedWriter{w: s.logs, mu: &s.mu}, &lockedWriter{w: s.logs, mu: &s.mu}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + s.addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not start: %v\n%s", err, s.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill ends the server at once (SIGKILL): no shutdown, as in a crash.
func (s *serverProcess) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGKILL)
		s.cmd.Wait()
		s.cmd = nil
	}
}

func (s *serverProcess) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// reply is one /v1 answer, with how long it took.
type reply struct {
	OK      bool            `json:"ok"`
	Code    string          `json:"code"`
	Error   string          `json:"error"`
	Result  json.RawMessage `json:"result"`
	Details map[string]any  `json:"details"`
	took    time.Duration
}

var client = &http.Client{Timeout: time.Minute}

// call invokes a tool on /v1.
func (s *serverProcess) call(tool, args string) (reply, error) {
	start := time.Now()
	resp, err := client.Post("http://"+s.addr+"/v1/tools/"+tool, "application/json", strings.NewReader(`{"args":`+args+`}`))
	if err != nil {
		return reply{took: time.Since(start)}, err
	}
	defer resp.Body.Close()
	var r reply
	err = json.NewDecoder(resp.Body).Decode(&r)
	r.took = time.Since(start)
	return r, err
}

// probe is one call the fault suite makes of a tool.
type probe struct {
	tool, args string
	healthy    string // the code when every dependency is well ("" for success)
}

// probes call every tool the way an agent does.
var probes = []probe{
	{"hello", `{"name":"faults"}`, ""},
	{"sys-audit", `{"command":"list_software"}`, ""},
	{"read_repo_file", `{"path":"README.md"}`, ""},
	{"read_file", `{"path":"src/app.go"}`, ""},
	{"grep_codebase", `{"pattern":"Serve"}`, ""},
	{"context_search", `{"query":"serve requests"}`, ""},
	{"add_task", `{"title":"fault probe"}`, ""},
	{"list_tasks", `{}`, ""},
	{"update_task", `{"task_id":1,"title":"fault probe, renamed"}`, ""},
	{"complete_task", `{"task_id":1}`, ""},
	{"delete_task", `{"task_id":999999}`, "RESOURCE_NOT_FOUND"},
	{"write_memory_entry", `{"file":"best_practices.md","content":"Probe the faults."}`, ""},
	{"read_memory", `{"file":"best_practices.md"}`, ""},
	{"file-io", `{"command":"write_file","path":"probe.txt","content":"probed"}`, ""},
}

// dependency is what fails: DynamoDB or S3.
type dependency struct {
	name  string
	proc  *emulator.Process
	proxy *emulator.Proxy
	// down: the tools that answer STORAGE_ERROR while it fails (the
	// others answer as when healthy: they hold what they need, or do not
	// use it).
	down []string
	// throttle is how it slows callers down.
	throttle *emulator.Canned
	// restored brings its data back after a restart (moto loses it).
	restored func(t *testing.T)
}

// failure is one way a dependency fails, and how it is undone.
type failure struct {
	name  string
	apply func(t *testing.T, d *dependency)
	undo  func(t *testing.T, d *dependency)
}

var failures = []failure{
	{"hang", func(t *testing.T, d *dependency) { must(t, d.proc.Stop()) }, func(t *testing.T, d *dependency) { must(t, d.proc.Continue()) }},
	{"slow", func(t *testing.T, d *dependency) { d.proxy.Delay(3 * time.Second) }, func(t *testing.T, d *dependency) { d.proxy.Pass() }},
	{"throttle", func(t *testing.T, d *dependency) { d.proxy.Throttle(d.throttle) }, func(t *testing.T, d *dependency) { d.proxy.Pass() }},
	{"refuse", func(t *testing.T, d *dependency) {
		d.proc.Kill()
		must(t, d.proxy.Refuse())
	}, func(t *testing.T, d *dependency) {
		must(t, d.proc.Restart())
		d.restored(t)
		must(t, d.proxy.Resume())
	}},
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestDependencyFaults runs the local server on DynamoDB (dynalite) and S3
// (moto_server), each behind a proxy, as processes the test controls, and
// calls every tool while each dependency hangs (SIGSTOP), answers slowly,
// throttles, and refuses (killed), then recovers (SIGCONT, or a restart).
// Every answer must come within its tool's deadline (from its contract)
// plus the pipeline's overrun and a margin, with STORAGE_ERROR from the
// tools that need what failed and a normal answer from the others; after
// each recovery every tool answers normally again.
func TestDependencyFaults(t *testing.T) {
	set, err := schema.Load(contracts.FS)
	must(t, err)
	dynamo := dynamotest.StartAt(t, t.TempDir())
	moto := emulator.StartMoto(t)
	tables := dynamo.NewTables(t)
	bucket := moto.NewBucket(t)
	repoDir := repotest.WriteDir(t, map[string]string{
		"README.md":  "# Faults\n",
		"src/app.go": "package app\n\n// Serve serves requests.\nfunc Serve() {}\n",
	})
	publish := func(t *testing.T) {
		t.Helper()
		b := objects.New(moto.S3(), bucket)
		_, err := repo.Publish(context.Background(), b, repo.PublishInput{Repo: reposcope.DefaultOf("acme"), Commit: "c1", Dir: repoDir,
			Paths: repotest.Files(t, repoDir), MaxBytes: repo.DefaultMaxBytes, Now: repotest.ModTime})
		must(t, err)
		ix := &indexer.Indexer{Store: indexfile.NewStore(&indexfile.S3Blobs{Bucket: b, Prefix: indexfile.BucketPrefix}),
			Snapshots: &indexer.Snapshots{Bucket: b, MaxBytes: repo.DefaultMaxBytes}, Now: time.Now, Log: slog.New(slog.DiscardHandler)}
		must(t, ix.IndexSnapshot(context.Background(), "acme"))
	}
	publish(t)
	dynamoProxy := emulator.StartProxy(t, dynamo.Endpoint)
	s3Proxy := emulator.StartProxy(t, moto.Endpoint)
	dynamoFailures = func() []string { return append(dynamoProxy.Failures(), "dynalite: "+dynamo.Process.Logs()) }
	s3Failures = func() []string { return append(s3Proxy.Failures(), "moto: "+tail(moto.Process.Logs(), 10)) }

	srv := startProcess(t, map[string]string{
		"TOOLSHED_STORE": "dynamodb", "TOOLSHED_DYNAMODB_ENDPOINT": dynamoProxy.URL(),
		"TOOLSHED_TASKS_TABLE": tables.Tasks, "TOOLSHED_MEMORY_TABLE": tables.Memory, "TOOLSHED_RATE_TABLE": tables.RateLimits,
		"TOOLSHED_ACCESS_TABLE": tables.Access, "TOOLSHED_APIKEYS_TABLE": tables.APIKeys,
		"TOOLSHED_BUCKET": bucket, "TOOLSHED_S3_ENDPOINT": s3Proxy.URL(),
		"TOOLSHED_AUTH": "off", "TOOLSHED_LOCAL_TENANT": "acme", "TOOLSHED_DATA_DIR": t.TempDir(),
		"TOOLSHED_RATE_LIMITS": "hello=100000,sys-audit=100000,read_repo_file=100000,read_file=100000,grep_codebase=100000,context_search=100000," +
			"add_task=100000,list_tasks=100000,update_task=100000,complete_task=100000,delete_task=100000,write_memory_entry=100000,read_memory=100000,file-io=100000",
	})
	healthy(t, srv, "at start")

	deps := []*dependency{
		{name: "DynamoDB", proc: dynamo.Process, proxy: dynamoProxy, throttle: emulator.ThrottleDynamoDB,
			down:     []string{"read_file", "add_task", "list_tasks", "update_task", "complete_task", "delete_task", "write_memory_entry", "read_memory", "file-io"},
			restored: func(*testing.T) {}}, // its tables live on disk
		{name: "S3", proc: moto.Process, proxy: s3Proxy, throttle: emulator.ThrottleS3,
			down: []string{"file-io"},
			restored: func(t *testing.T) {
				_, err := moto.S3().CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &bucket})
				must(t, err)
				publish(t)
			}},
	}
	var matrix []string
	for _, d := range deps {
		for _, f := range failures {
			t.Run(d.name+"/"+f.name, func(t *testing.T) {
				f.apply(t, d)
				answers := callAll(t, srv)
				f.undo(t, d)
				for _, p := range probes {
					a := answers[p.tool]
					c, _ := set.Get(p.tool)
					deadline := time.Duration(c.TimeoutMs) * time.Millisecond
					want := p.healthy
					if slices.Contains(d.down, p.tool) {
						want = "STORAGE_ERROR"
					}
					got := a.Code
					matrix = append(matrix, fmt.Sprintf("%-8s %-8s %-18s %-18s %5d ms of %5d ms", d.name, f.name, p.tool, cmpOr(got, "ok"), a.took.Milliseconds(), deadline.Milliseconds()))
					if got != want {
						t.Errorf("%s: %s %q, want %s", p.tool, cmpOr(got, "ok"), a.Error, cmpOr(want, "ok"))
					}
					if limit := deadline + toolkit.Overrun + time.Second; a.took > limit {
						t.Errorf("%s answered after %s, over its deadline of %s (+%s overrun, +1 s)", p.tool, a.took, deadline, toolkit.Overrun)
					}
					if got == "STORAGE_ERROR" && f.name == "throttle" && a.Details == nil && !strings.Contains(a.Error, "throttling") {
						t.Errorf("%s throttled: %q does not say so", p.tool, a.Error)
					}
				}
				healthy(t, srv, "after "+f.name+" of "+d.name+" was undone")
			})
		}
	}
	// With API keys, every call first looks its key up in DynamoDB: a hung
	// table answers STORAGE_ERROR within the lookup's bound.
	t.Run("DynamoDB/hang/api key lookup", func(t *testing.T) {
		key, _, err := auth.Create(context.Background(), dynamostore.New(dynamo.Client(), tables).APIKeys, "acme", "faults", time.Now())
		must(t, err)
		keyed := startProcess(t, map[string]string{
			"TOOLSHED_STORE": "dynamodb", "TOOLSHED_DYNAMODB_ENDPOINT": dynamoProxy.URL(),
			"TOOLSHED_TASKS_TABLE": tables.Tasks, "TOOLSHED_MEMORY_TABLE": tables.Memory, "TOOLSHED_RATE_TABLE": tables.RateLimits,
			"TOOLSHED_ACCESS_TABLE": tables.Access, "TOOLSHED_APIKEYS_TABLE": tables.APIKeys,
			"TOOLSHED_BUCKET": bucket, "TOOLSHED_S3_ENDPOINT": s3Proxy.URL(), "TOOLSHED_AUTH": "keys", "TOOLSHED_DATA_DIR": t.TempDir(),
		})
		hello := func() reply {
			req, _ := http.NewRequest("POST", "http://"+keyed.addr+"/v1/tools/hello", strings.NewReader(`{"args":{"name":"k"}}`))
			req.Header.Set("Authorization", "Bearer "+key)
			start := time.Now()
			resp, err := client.Do(req)
			must(t, err)
			defer resp.Body.Close()
			var r reply
			json.NewDecoder(resp.Body).Decode(&r)
			r.took = time.Since(start)
			return r
		}
		if r := hello(); !r.OK {
			t.Fatalf("hello with a key: %+v", r)
		}
		must(t, dynamo.Process.Stop())
		r := hello()
		must(t, dynamo.Process.Continue())
		matrix = append(matrix, fmt.Sprintf("%-8s %-8s %-18s %-18s %5d ms of %5d ms", "DynamoDB", "hang", "(API key lookup)", cmpOr(r.Code, "ok"), r.took.Milliseconds(), httpapi.AuthTimeout.Milliseconds()))
		if r.Code != "STORAGE_ERROR" || !strings.Contains(r.Error, "API key could not be checked") {
			t.Errorf("hello with the key table hung: %s %q", r.Code, r.Error)
		}
		if limit := httpapi.AuthTimeout + time.Second; r.took > limit {
			t.Errorf("the key lookup answered after %s, over %s", r.took, limit)
		}
	})
	t.Logf("fault matrix (dependency, failure, tool, answer, time against its deadline):\n%s", strings.Join(matrix, "\n"))
	if t.Failed() {
		t.Logf("server log:\n%s", tail(srv.output(), 60))
	}
}

// dynamoFailures and s3Failures report what the proxies could not pass on.
var dynamoFailures, s3Failures = func() []string { return nil }, func() []string { return nil }

// callAll calls every probe at once and returns the answers by tool.
func callAll(t *testing.T, srv *serverProcess) map[string]reply {
	t.Helper()
	var mu sync.Mutex
	out := map[string]reply{}
	var wg sync.WaitGroup
	for _, p := range probes {
		wg.Go(func() {
			r, err := srv.call(p.tool, p.args)
			if err != nil {
				r.Code, r.Error = "NO_ANSWER", err.Error()
			}
			mu.Lock()
			out[p.tool] = r
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// healthy checks that every tool answers as when nothing fails, allowing
// the dependencies a few seconds to settle after a recovery.
func healthy(t *testing.T, srv *serverProcess, when string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		answers := callAll(t, srv)
		var bad []string
		for _, p := range probes {
			if a := answers[p.tool]; a.Code != p.healthy {
				bad = append(bad, fmt.Sprintf("%s: %s %q", p.tool, cmpOr(a.Code, "ok"), a.Error))
			}
		}
		if len(bad) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s, not every tool answers normally:\n%s\nproxies:\n%s\nserver log:\n%s", when, strings.Join(bad, "\n"),
				strings.Join(append(dynamoFailures(), s3Failures()...), "\n"), tail(srv.output(), 40))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func cmpOr(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
