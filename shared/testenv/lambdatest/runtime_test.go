package lambdatest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// These tests play the runtime by hand, with plain HTTP, to pin the
// Runtime API's answers; function_test.go runs the real aws-lambda-go
// client against it.

func newRuntime(t *testing.T, cfg RuntimeConfig) *Runtime {
	t.Helper()
	r, err := NewRuntime(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// call sends one Runtime API request and returns the status, headers and body.
func call(t *testing.T, r *Runtime, method, path, body string, header http.Header) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+r.Addr()+"/2018-06-01/runtime/"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

// invokeAsync starts an invocation and returns where its outcome arrives.
func invokeAsync(r *Runtime, event string) <-chan Response {
	out := make(chan Response, 1)
	go func() {
		resp, err := r.Invoke(context.Background(), []byte(event))
		if err != nil {
			resp = Response{ErrorType: "invoke failed: " + err.Error()}
		}
		out <- resp
	}()
	return out
}

// next takes the next invocation like a runtime would and returns its id.
func next(t *testing.T, r *Runtime) (string, http.Header, string) {
	t.Helper()
	status, h, body := call(t, r, "GET", "invocation/next", "", nil)
	if status != http.StatusOK {
		t.Fatalf("GET next: %d %s", status, body)
	}
	return h.Get("Lambda-Runtime-Aws-Request-Id"), h, body
}

func TestNextCarriesTheInvocation(t *testing.T) {
	const arn = "arn:aws:lambda:us-east-1:123456789012:function:f"
	r := newRuntime(t, RuntimeConfig{FunctionArn: arn, Timeout: 7 * time.Second})
	done := invokeAsync(r, `{"hello":"world"}`)
	before := time.Now()
	id, h, body := next(t, r)

	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(id) {
		t.Errorf("Lambda-Runtime-Aws-Request-Id %q is not a UUID", id)
	}
	if got := h.Get("Lambda-Runtime-Invoked-Function-Arn"); got != arn {
		t.Errorf("Lambda-Runtime-Invoked-Function-Arn = %q, want %q", got, arn)
	}
	if got := h.Get("Lambda-Runtime-Trace-Id"); !regexp.MustCompile(`^Root=1-[0-9a-f]{8}-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=1$`).MatchString(got) {
		t.Errorf("Lambda-Runtime-Trace-Id = %q", got)
	}
	deadline, err := strconv.ParseInt(h.Get("Lambda-Runtime-Deadline-Ms"), 10, 64)
	if err != nil {
		t.Fatalf("Lambda-Runtime-Deadline-Ms: %v", err)
	}
	if d := time.UnixMilli(deadline).Sub(before); d < 6*time.Second || d > 8*time.Second {
		t.Errorf("deadline is %v after the hand-over, want the 7s timeout", d)
	}
	if body != `{"hello":"world"}` {
		t.Errorf("event = %s", body)
	}

	status, _, ack := call(t, r, "POST", "invocation/"+id+"/response", `{"answer":42}`, nil)
	if status != http.StatusAccepted || ack != `{"status":"OK"}` {
		t.Errorf("POST response: %d %s", status, ack)
	}
	got := <-done
	if got.RequestID != id || string(got.Payload) != `{"answer":42}` || got.FunctionError != "" || got.TraceID != h.Get("Lambda-Runtime-Trace-Id") {
		t.Errorf("invoke got %+v", got)
	}
	if inv := r.Invocations(); len(inv) != 1 || string(inv[0].Event) != `{"hello":"world"}` {
		t.Errorf("Invocations() = %+v", inv)
	}
}

func TestInvocationError(t *testing.T) {
	tests := []struct {
		name          string
		header        string
		body          string
		wantType      string
		wantPayloadIs string
	}{
		{"document and header", "MyError", `{"errorMessage":"boom","errorType":"MyError"}`, "MyError", `{"errorMessage":"boom","errorType":"MyError"}`},
		{"type only in the document", "", `{"errorMessage":"boom","errorType":"DocType"}`, "DocType", `{"errorMessage":"boom","errorType":"DocType"}`},
		{"no body: built from the header", "Runtime.Crash", "", "Runtime.Crash", `{"errorMessage":"","errorType":"Runtime.Crash"}`},
		{"nothing at all", "", "not json", "Runtime.Unknown", `{"errorMessage":"","errorType":"Runtime.Unknown"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRuntime(t, RuntimeConfig{})
			done := invokeAsync(r, `{}`)
			id, _, _ := next(t, r)
			h := http.Header{}
			if tt.header != "" {
				h.Set("Lambda-Runtime-Function-Error-Type", tt.header)
			}
			if status, _, body := call(t, r, "POST", "invocation/"+id+"/error", tt.body, h); status != http.StatusAccepted {
				t.Fatalf("POST error: %d %s", status, body)
			}
			got := <-done
			if got.FunctionError != "Unhandled" || got.ErrorType != tt.wantType || string(got.Payload) != tt.wantPayloadIs {
				t.Errorf("got %+v (payload %s), want Unhandled %s %s", got, got.Payload, tt.wantType, tt.wantPayloadIs)
			}
		})
	}
}

func TestInitError(t *testing.T) {
	r := newRuntime(t, RuntimeConfig{})
	h := http.Header{"Lambda-Runtime-Function-Error-Type": {"Runtime.InitError"}}
	doc := `{"errorMessage":"TOOLSHED_TOOL is not set","errorType":"Runtime.InitError"}`
	if status, _, body := call(t, r, "POST", "init/error", doc, h); status != http.StatusAccepted || body != `{"status":"OK"}` {
		t.Fatalf("POST init/error: %d %s", status, body)
	}
	for i := range 2 { // the first invocation, and every later one
		got, err := r.Invoke(context.Background(), []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if got.FunctionError != "Unhandled" || got.ErrorType != "Runtime.InitError" || string(got.Payload) != doc || got.RequestID == "" {
			t.Errorf("invocation %d: got %+v (payload %s)", i, got, got.Payload)
		}
	}
	if status, _, body := call(t, r, "GET", "invocation/next", "", nil); status != http.StatusForbidden || !strings.Contains(body, "InvalidStateTransition") {
		t.Errorf("next after an init error: %d %s", status, body)
	}
	if status, _, _ := call(t, r, "POST", "init/error", doc, h); status != http.StatusForbidden {
		t.Errorf("second init error: %d, want 403", status)
	}
}

// TestRuntimeRefusals checks the answers to a runtime that breaks the
// protocol.
func TestRuntimeRefusals(t *testing.T) {
	r := newRuntime(t, RuntimeConfig{})
	done := invokeAsync(r, `{}`)
	id, _, _ := next(t, r)

	tests := []struct {
		name, method, path, body string
		status                   int
		errType                  string
	}{
		{"answer for another invocation", "POST", "invocation/00000000-0000-4000-8000-000000000000/response", `{}`, 400, "InvalidRequestID"},
		{"error for another invocation", "POST", "invocation/nope/error", `{}`, 400, "InvalidRequestID"},
		{"next before answering", "GET", "invocation/next", "", 403, "InvalidStateTransition"},
		{"init error after init", "POST", "init/error", `{}`, 403, "InvalidStateTransition"},
		{"unknown route", "GET", "invocation/" + id, "", 404, "NotFound"},
		{"wrong method", "POST", "invocation/next", "", 404, "NotFound"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body := call(t, r, tt.method, tt.path, tt.body, nil)
			var doc struct{ ErrorType, ErrorMessage string }
			if err := json.Unmarshal([]byte(body), &doc); err != nil || h.Get("Content-Type") != "application/json" {
				t.Fatalf("body %q is not a JSON error document (%v)", body, err)
			}
			if status != tt.status || doc.ErrorType != tt.errType || doc.ErrorMessage == "" {
				t.Errorf("got %d %s, want %d %s", status, body, tt.status, tt.errType)
			}
		})
	}

	// The invocation is still the runtime's to answer.
	if status, _, body := call(t, r, "POST", "invocation/"+id+"/response", `"late but fine"`, nil); status != http.StatusAccepted {
		t.Fatalf("answer: %d %s", status, body)
	}
	if got := <-done; string(got.Payload) != `"late but fine"` {
		t.Errorf("got %+v", got)
	}
	if status, _, _ := call(t, r, "POST", "invocation/"+id+"/response", `"twice"`, nil); status != http.StatusBadRequest {
		t.Errorf("second answer: %d, want 400", status)
	}
}

func TestResponseTooLarge(t *testing.T) {
	r := newRuntime(t, RuntimeConfig{})
	done := invokeAsync(r, `{}`)
	id, _, _ := next(t, r)
	status, _, body := call(t, r, "POST", "invocation/"+id+"/response", `"`+strings.Repeat("x", MaxResponseBytes)+`"`, nil)
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "RequestEntityTooLarge") {
		t.Errorf("runtime got %d %s, want 413", status, body)
	}
	got := <-done
	if got.FunctionError != "Unhandled" || got.ErrorType != ErrorResponseTooLarge ||
		!strings.Contains(string(got.Payload), "Response payload size exceeded maximum allowed payload size (6291556 bytes).") {
		t.Errorf("got %+v (payload %s)", got, got.Payload)
	}
}

// TestErrorInTrailers: a runtime that fails while streaming its response
// reports the error in HTTP trailers (aws-lambda-go does so when a handler's
// io.Reader response fails).
func TestErrorInTrailers(t *testing.T) {
	r := newRuntime(t, RuntimeConfig{})
	done := invokeAsync(r, `{}`)
	id, _, _ := next(t, r)
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", "http://"+r.Addr()+"/2018-06-01/runtime/invocation/"+id+"/response", pr)
	req.Trailer = http.Header{"Lambda-Runtime-Function-Error-Type": nil, "Lambda-Runtime-Function-Error-Body": nil}
	go func() {
		io.WriteString(pw, `{"partial":`)
		req.Trailer.Set("Lambda-Runtime-Function-Error-Type", "ReadError")
		req.Trailer.Set("Lambda-Runtime-Function-Error-Body", "eyJlcnJvck1lc3NhZ2UiOiJkaXNrIGdvbmUiLCJlcnJvclR5cGUiOiJSZWFkRXJyb3IifQ==")
		pw.Close()
	}()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := <-done
	if got.FunctionError != "Unhandled" || got.ErrorType != "ReadError" || string(got.Payload) != `{"errorMessage":"disk gone","errorType":"ReadError"}` {
		t.Errorf("got %+v (payload %s)", got, got.Payload)
	}
}

func TestTimeout(t *testing.T) {
	timedOut := make(chan struct{})
	r := newRuntime(t, RuntimeConfig{Timeout: 200 * time.Millisecond, OnTimeout: func() { close(timedOut) }})
	done := invokeAsync(r, `{}`)
	id, _, _ := next(t, r)
	got := <-done
	<-timedOut
	if got.FunctionError != "Unhandled" || got.ErrorType != ErrorTimeout ||
		string(got.Payload) != `{"errorMessage":"RequestId: `+id+` Error: Task timed out after 0.20 seconds","errorType":"Sandbox.Timedout"}` {
		t.Errorf("got %+v (payload %s)", got, got.Payload)
	}
	if status, _, _ := call(t, r, "POST", "invocation/"+id+"/response", `{}`, nil); status != http.StatusBadRequest {
		t.Errorf("answer after the deadline: %d, want 400", status)
	}
}

func TestShutdown(t *testing.T) {
	r := newRuntime(t, RuntimeConfig{})
	done := invokeAsync(r, `{}`)
	id, _, _ := next(t, r)
	r.Shutdown(ErrorExit, "Runtime exited with error: exit status 2")
	want := `{"errorMessage":"RequestId: ` + id + ` Error: Runtime exited with error: exit status 2","errorType":"Runtime.ExitError"}`
	if got := <-done; got.ErrorType != ErrorExit || string(got.Payload) != want {
		t.Errorf("invocation under way: got %+v (payload %s)", got, got.Payload)
	}
	got, err := r.Invoke(context.Background(), []byte(`{}`))
	if err != nil || got.ErrorType != ErrorExit || !strings.Contains(string(got.Payload), "exit status 2") {
		t.Errorf("later invocation: %+v %v", got, err)
	}
}

// TestOneInvocationAtATime: concurrent invocations are handed over in turn,
// each after the previous one was answered.
func TestOneInvocationAtATime(t *testing.T) {
	r := newRuntime(t, RuntimeConfig{})
	const n = 5
	results := make([]<-chan Response, n)
	for i := range n {
		results[i] = invokeAsync(r, strconv.Itoa(i))
	}
	for range n {
		id, _, event := next(t, r)
		if status, _, body := call(t, r, "GET", "invocation/next", "", nil); status != http.StatusForbidden {
			t.Fatalf("a second invocation was handed out while %s ran: %d %s", id, status, body)
		}
		call(t, r, "POST", "invocation/"+id+"/response", `"echo `+event+`"`, nil)
	}
	for i, ch := range results {
		if got := <-ch; string(got.Payload) != `"echo `+strconv.Itoa(i)+`"` {
			t.Errorf("invocation %d got %s", i, got.Payload)
		}
	}
}

func TestInvokeGivesUpWithItsContext(t *testing.T) {
	r := newRuntime(t, RuntimeConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Invoke(ctx, []byte(`{}`)); err != context.Canceled {
		t.Errorf("got %v, want context.Canceled while no runtime is ready", err)
	}
}
