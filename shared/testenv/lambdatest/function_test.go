package lambdatest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// echoBootstrap is testdata/echo built for the host, by TestMain.
var echoBootstrap string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lambdatest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	echoBootstrap = filepath.Join(dir, "bootstrap")
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", echoBootstrap, "./testdata/echo")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build testdata/echo: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func startEcho(t *testing.T, cfg Config) *Function {
	t.Helper()
	cfg.Bootstrap = echoBootstrap
	if cfg.Name == "" {
		cfg.Name = "echo"
	}
	fn, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fn.Stop)
	return fn
}

func invoke(t *testing.T, fn *Function, event string) Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := fn.Invoke(ctx, []byte(event))
	if err != nil {
		t.Fatalf("invoke %s: %v\noutput:\n%s", event, err, fn.Output())
	}
	return resp
}

// TestAWSLambdaGoClient runs the real runtime client (aws-lambda-go, built
// with lambda.norpc) against the Runtime API.
func TestAWSLambdaGoClient(t *testing.T) {
	fn := startEcho(t, Config{Name: "echo-fn", Timeout: 5 * time.Second, MemoryMB: 512, Region: "eu-west-1",
		Env: map[string]string{"ECHO_CUSTOM": "from the deployment"}})
	ctx := context.Background()
	if d, err := fn.InitDuration(ctx); err != nil || d <= 0 {
		t.Fatalf("InitDuration = %v, %v", d, err)
	}

	t.Run("response", func(t *testing.T) {
		got := invoke(t, fn, `{"echo":{"a":[1,2]}}`)
		if got.FunctionError != "" || string(got.Payload) != `{"a":[1,2]}` {
			t.Errorf("got %+v (payload %s)", got, got.Payload)
		}
	})
	t.Run("handler error", func(t *testing.T) {
		got := invoke(t, fn, `{"fail":"boom"}`)
		if got.FunctionError != "Unhandled" || got.ErrorType != "errorString" || string(got.Payload) != `{"errorMessage":"boom","errorType":"errorString"}` {
			t.Errorf("got %+v (payload %s)", got, got.Payload)
		}
	})
	t.Run("invocation context", func(t *testing.T) {
		before := time.Now()
		got := invoke(t, fn, `{"context":true}`)
		var ic struct {
			RequestID, FunctionArn, TraceID, FunctionName, Region, Custom string
			DeadlineMs                                                    int64
			MemoryMB                                                      int
		}
		if err := json.Unmarshal(got.Payload, &ic); err != nil {
			t.Fatalf("%s: %v", got.Payload, err)
		}
		want := "arn:aws:lambda:eu-west-1:123456789012:function:echo-fn"
		if ic.RequestID != got.RequestID || ic.FunctionArn != want || ic.TraceID != got.TraceID || ic.TraceID == "" ||
			ic.FunctionName != "echo-fn" || ic.MemoryMB != 512 || ic.Region != "eu-west-1" || ic.Custom != "from the deployment" {
			t.Errorf("the handler saw %+v; invocation %s trace %s", ic, got.RequestID, got.TraceID)
		}
		if d := time.UnixMilli(ic.DeadlineMs).Sub(before); d < 4*time.Second || d > 6*time.Second {
			t.Errorf("the handler's deadline is %v away, want the 5s timeout", d)
		}
	})
	if rss, err := fn.PeakRSS(); err != nil || rss < 1<<20 {
		t.Errorf("PeakRSS = %d, %v", rss, err)
	}
	if n := len(fn.Runtime.Invocations()); n != 3 {
		t.Errorf("%d invocations recorded, want 3", n)
	}
}

// TestProcessEnds: a panic, a response over the limit and a timeout each end
// the process; that invocation and every later one fail as Lambda reports
// them.
// TestLayers: a function's layers are on its PATH and LD_LIBRARY_PATH as
// Lambda puts them, their programs before this machine's own (a layer's
// git before /usr/bin/git).
func TestLayers(t *testing.T) {
	layers := []string{t.TempDir(), t.TempDir()}
	for i, layer := range layers {
		if err := os.MkdirAll(filepath.Join(layer, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		script := fmt.Sprintf("#!/bin/sh\necho layer %d\n", i)
		if err := os.WriteFile(filepath.Join(layer, "bin", "git"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fn := startEcho(t, Config{Layers: layers})
	resp := invoke(t, fn, `{"run":"git"}`)
	var got map[string]string
	if err := json.Unmarshal(resp.Payload, &got); err != nil {
		t.Fatalf("%v: %s", err, resp.Payload)
	}
	want := map[string]string{
		"output":        "layer 0\n",
		"path":          layers[0] + "/bin:" + layers[1] + "/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin",
		"ldLibraryPath": layers[0] + "/lib:" + layers[1] + "/lib",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestProcessEnds(t *testing.T) {
	tests := []struct {
		name      string
		timeout   time.Duration
		event     string
		wantType  string
		wantInMsg string
	}{
		{"panic", DefaultTimeout, `{"panic":"oh no"}`, "string", `"errorMessage":"oh no"`},
		{"response too large", DefaultTimeout, fmt.Sprintf(`{"big":%d}`, MaxResponseBytes), ErrorResponseTooLarge, "6291556 bytes"},
		{"timeout", 300 * time.Millisecond, `{"sleepMs":5000}`, ErrorTimeout, "Task timed out after 0.30 seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fn := startEcho(t, Config{Timeout: tt.timeout})
			got := invoke(t, fn, tt.event)
			if got.FunctionError != "Unhandled" || got.ErrorType != tt.wantType || !strings.Contains(string(got.Payload), tt.wantInMsg) {
				t.Errorf("got %+v (payload %.200s)", got, got.Payload)
			}
			<-fn.Exited()
			if fn.ExitCode() == 0 {
				t.Errorf("exit code 0 after %s", tt.name)
			}
			later := invoke(t, fn, `{"echo":1}`)
			if later.ErrorType != ErrorExit || !strings.Contains(string(later.Payload), "Runtime exited with error") {
				t.Errorf("later invocation: %+v (payload %s)", later, later.Payload)
			}
		})
	}
}

func TestExitDuringInit(t *testing.T) {
	fn := startEcho(t, Config{Env: map[string]string{"ECHO_EXIT_AT_INIT": "1"}})
	if _, err := fn.InitDuration(context.Background()); err == nil || !strings.Contains(err.Error(), "exited during init") {
		t.Errorf("InitDuration: %v", err)
	}
	got := invoke(t, fn, `{}`)
	if got.ErrorType != ErrorExit || !strings.Contains(string(got.Payload), "Runtime exited with error: exit status 3") {
		t.Errorf("got %+v (payload %s)", got, got.Payload)
	}
	if fn.ExitCode() != 3 {
		t.Errorf("exit code %d, want 3", fn.ExitCode())
	}
}
