package toolkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/toolshed/toolshed/shared/caller"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/telemetry"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

const contract = `{"name":"echo","aliases":["echo-alias"],"title":"Echo","description":"echoes","timeoutMs":50,
	"rateLimit":{"requestsPerMinute":3},
	"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false},
	"inputSchema":{"type":"object","properties":{"mode":{"type":"string"},"n":{"type":"integer","default":7}},"required":["mode"],"additionalProperties":false},
	"outputSchema":{"type":"object","properties":{"mode":{"type":"string"},"n":{"type":"integer"}},"required":["mode","n"]},
	"examples":[]}`

// writer is echo's contract for a tool that changes things.
var writer = strings.NewReplacer(`"name":"echo","aliases":["echo-alias"]`, `"name":"writer"`, `"readOnlyHint":true`, `"readOnlyHint":false`).Replace(contract)

type in struct {
	Mode string `json:"mode"`
	N    int    `json:"n"`
}

func echo(ctx context.Context, call toolkit.Call, in in) (toolkit.Result, error) {
	switch in.Mode {
	case "panic":
		panic("boom")
	case "sleep":
		time.Sleep(time.Second) // ignores ctx on purpose
	case "not-found":
		return toolkit.Result{}, toolerr.New(toolerr.ResourceNotFound, "no such thing")
	case "storage":
		return toolkit.Result{}, fmt.Errorf("put: %w: connection reset", store.ErrStorage)
	case "secret":
		return toolkit.Result{}, errors.New("password=hunter2 leaked in a driver error")
	case "bad-output":
		return toolkit.Result{Data: map[string]any{"mode": 1}}, nil
	case "slow-encode":
		return toolkit.Result{Data: slowJSON{}}, nil
	case "late":
		<-ctx.Done() // finishes its work as the deadline passes
		return toolkit.Result{Data: in}, nil
	case "stops":
		<-ctx.Done()
		return toolkit.Result{}, ctx.Err()
	}
	return toolkit.Result{Data: in}, nil
}

// slowJSON takes longer to encode than the echo contract's deadline and
// the overrun after it.
type slowJSON struct{}

func (slowJSON) MarshalJSON() ([]byte, error) {
	time.Sleep(toolkit.Overrun + 300*time.Millisecond)
	return []byte(`{"mode":"slow","n":1}`), nil
}

type recorder struct {
	mu      sync.Mutex
	records []telemetry.Record
}

func (r *recorder) Observe(_ context.Context, rec telemetry.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec)
}

type countingLimiter struct {
	mu    sync.Mutex
	count map[string]int
	err   error
}

func (l *countingLimiter) Allow(_ context.Context, tenant, tool string, perMinute int) (toolkit.Decision, error) {
	if l.err != nil {
		return toolkit.Decision{}, l.err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.count[tenant+tool]++
	if l.count[tenant+tool] > perMinute {
		return toolkit.Decision{RetryAfter: 12300 * time.Millisecond}, nil
	}
	return toolkit.Decision{Allowed: true}, nil
}

func newPipeline(t *testing.T, opts toolkit.Options) *toolkit.Pipeline {
	t.Helper()
	set, err := schema.Load(fstest.MapFS{"echo.json": {Data: []byte(contract)}, "writer.json": {Data: []byte(writer)}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := toolkit.NewPipeline(set, []toolkit.Tool{{Name: "echo", Handler: toolkit.Typed(echo)}, {Name: "writer", Handler: toolkit.Typed(echo)}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPipelineOutcomes(t *testing.T) {
	rec := &recorder{}
	p := newPipeline(t, toolkit.Options{Observer: rec})
	tests := []struct {
		name, tool, tenant, args string
		wantCode                 toolerr.Code
		wantResult, wantMsg      string
	}{
		{"ok with default", "echo", "t1", `{"mode":"x"}`, "", `{"mode":"x","n":7}`, ""},
		{"alias", "echo-alias", "t1", `{"mode":"x","n":2}`, "", `{"mode":"x","n":2}`, ""},
		{"unknown tool", "nope", "t1", `{}`, toolerr.ToolNotFound, "", `no tool named "nope"`},
		{"no tenant", "echo", "", `{"mode":"x"}`, toolerr.AccessDenied, "", "the request carries no valid tenant"},
		{"tenant with separator", "echo", "a#b", `{"mode":"x"}`, toolerr.AccessDenied, "", "the request carries no valid tenant"},
		{"invalid input", "echo", "t1", `{"mode":1}`, toolerr.InvalidInput, "", "mode: must be of type string"},
		{"panic", "echo", "t1", `{"mode":"panic"}`, toolerr.Internal, "", "internal error"},
		{"deadline", "echo", "t1", `{"mode":"sleep"}`, toolerr.Timeout, "", "echo did not finish in time"},
		{"tool error", "echo", "t1", `{"mode":"not-found"}`, toolerr.ResourceNotFound, "", "no such thing"},
		{"storage", "echo", "t1", `{"mode":"storage"}`, toolerr.StorageError, "", "storage is unavailable"},
		{"internal hides cause", "echo", "t1", `{"mode":"secret"}`, toolerr.Internal, "", "internal error"},
		{"deadline covers encoding", "echo", "t1", `{"mode":"slow-encode"}`, toolerr.Timeout, "", "echo did not finish in time"},
		{"work done as the deadline passed", "echo", "t1", `{"mode":"late"}`, "", `{"mode":"late","n":7}`, ""},
		{"work stopped at the deadline", "echo", "t1", `{"mode":"stops"}`, toolerr.Timeout, "", "echo did not finish in time"},
		{"arguments over the size limit", "echo", "t1", `{"mode":"` + strings.Repeat("x", schema.DefaultMaxInputBytes) + `"}`, toolerr.SizeLimitExceeded, "", "arguments are 65547 bytes; echo accepts at most 65536"},
		{"output off contract", "echo", "t1", `{"mode":"bad-output"}`, toolerr.Internal, "", "internal error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := p.Invoke(context.Background(), toolkit.Request{Tool: tt.tool, Tenant: tt.tenant, Args: json.RawMessage(tt.args), RequestID: "r"})
			if tt.wantCode == "" {
				if !out.OK || string(out.Result) != tt.wantResult {
					t.Fatalf("got %+v %s", out.Error, out.Result)
				}
				return
			}
			if out.OK || out.Error.Code != tt.wantCode || !strings.HasPrefix(out.Error.Message, tt.wantMsg) {
				t.Fatalf("got %+v, want %s %q", out.Error, tt.wantCode, tt.wantMsg)
			}
			if strings.Contains(out.Error.Message, "hunter2") {
				t.Error("internal cause leaked to the caller")
			}
		})
	}
	last := rec.records[len(rec.records)-1]
	if last.Code != toolerr.Internal || last.Cause == nil || last.RequestID != "r" || last.Tool != "echo" {
		t.Errorf("observer record %+v", last)
	}
	if len(rec.records) != len(tests) {
		t.Errorf("%d records for %d calls", len(rec.records), len(tests))
	}
}

func TestPipelineRateLimit(t *testing.T) {
	l := &countingLimiter{count: map[string]int{}}
	rec := &recorder{}
	p := newPipeline(t, toolkit.Options{Limiter: l, Observer: rec})
	call := func(tenant string) toolkit.Outcome {
		return p.Invoke(context.Background(), toolkit.Request{Tool: "echo", Tenant: tenant, Args: json.RawMessage(`{"mode":"x"}`)})
	}
	for i := 0; i < 3; i++ {
		if out := call("t1"); !out.OK {
			t.Fatalf("call %d limited: %+v", i, out.Error)
		}
	}
	out := call("t1")
	if out.OK || out.Error.Code != toolerr.RateLimited || out.Error.RetryAfter != 13 {
		t.Fatalf("4th call: %+v", out.Error)
	}
	if !call("t2").OK {
		t.Error("another tenant was limited")
	}

	// The limiter's storage fails: a read-only tool runs anyway, and the
	// log says why; a tool that changes things is refused.
	l.err = fmt.Errorf("count: %w", store.ErrStorage)
	if out := call("t3"); !out.OK {
		t.Errorf("read-only tool with the limiter down: %+v", out.Error)
	}
	if last := rec.records[len(rec.records)-1]; len(last.Notes) != 1 || !strings.Contains(last.Notes[0], "rate limiter unavailable") {
		t.Errorf("notes of the call: %q", last.Notes)
	}
	out = p.Invoke(context.Background(), toolkit.Request{Tool: "writer", Tenant: "t3", Args: json.RawMessage(`{"mode":"x"}`)})
	if out.OK || out.Error.Code != toolerr.StorageError || !strings.Contains(out.Error.Message, "nothing was changed") {
		t.Errorf("writer with the limiter down: %+v", out.Error)
	}
}

func TestPipelineOverrides(t *testing.T) {
	l := &countingLimiter{count: map[string]int{}}
	p := newPipeline(t, toolkit.Options{Limiter: l, LimitOverrides: map[string]int{"echo": 1}})
	args := json.RawMessage(`{"mode":"x"}`)
	p.Invoke(context.Background(), toolkit.Request{Tool: "echo", Tenant: "t", Args: args})
	if out := p.Invoke(context.Background(), toolkit.Request{Tool: "echo", Tenant: "t", Args: args}); out.OK {
		t.Error("override of 1/min not applied")
	}
	set, _ := schema.Load(fstest.MapFS{"echo.json": {Data: []byte(contract)}})
	if _, err := toolkit.NewPipeline(set, nil, toolkit.Options{LimitOverrides: map[string]int{"echo": 1}}); err == nil {
		t.Error("override for an unserved tool accepted")
	}
	if _, err := toolkit.NewPipeline(set, []toolkit.Tool{{Name: "ghost"}}, toolkit.Options{}); err == nil {
		t.Error("tool without contract accepted")
	}
}

func TestTypedDecodeErrorsAreInvalidInput(t *testing.T) {
	type args struct {
		N int `json:"n"`
	}
	h := toolkit.Typed(func(ctx context.Context, call toolkit.Call, in args) (toolkit.Result, error) {
		return toolkit.Result{Data: in}, nil
	})
	_, err := h(context.Background(), toolkit.Call{Tool: "x", Args: json.RawMessage(`{"n":1.5}`)})
	var te *toolerr.Error
	if !errors.As(err, &te) || te.Code != toolerr.InvalidInput || !strings.HasPrefix(te.Message, "n: ") {
		t.Errorf("got %v", err)
	}
}

// hangingLimiter never answers: its storage hangs.
type hangingLimiter struct{}

func (hangingLimiter) Allow(ctx context.Context, _, _ string, _ int) (toolkit.Decision, error) {
	<-ctx.Done()
	return toolkit.Decision{}, fmt.Errorf("count: %w: %w", store.ErrStorage, ctx.Err())
}

// TestDeadlineCoversTheWholeCall: the deadline runs from when the request
// was accepted and bounds the rate-limit check too, so a hung limiter
// cannot hold a call.
func TestDeadlineCoversTheWholeCall(t *testing.T) {
	p := newPipeline(t, toolkit.Options{Limiter: hangingLimiter{}})
	done := make(chan toolkit.Outcome, 1)
	go func() {
		done <- p.Invoke(context.Background(), toolkit.Request{Tool: "writer", Tenant: "t", Args: json.RawMessage(`{"mode":"x"}`)})
	}()
	select {
	case out := <-done:
		if out.OK || (out.Error.Code != toolerr.Timeout && out.Error.Code != toolerr.StorageError) {
			t.Errorf("with the limiter hung: %+v", out.Error)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a hung limiter holds the call")
	}

	// A request accepted longer ago than the deadline has no time left.
	late := caller.With(context.Background(), caller.Identity{Accepted: time.Now().Add(-time.Second)})
	out := newPipeline(t, toolkit.Options{}).Invoke(late, toolkit.Request{Tool: "echo", Tenant: "t", Args: json.RawMessage(`{"mode":"stops"}`)})
	if out.OK || out.Error.Code != toolerr.Timeout {
		t.Errorf("accepted a second ago, 50 ms deadline: %+v", out.Error)
	}
}

// noteContract takes an open object, note, whose title the schema bounds
// (like write_memory_entry's entry or sys-audit's baseline: other keys
// pass unchecked).
const noteContract = `{"name":"note","title":"Note","description":"echoes a note's title","timeoutMs":1000,
	"rateLimit":{"requestsPerMinute":100},
	"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false},
	"inputSchema":{"type":"object","properties":{"note":{"type":"object","properties":{"title":{"type":"string","maxLength":5}}}},
		"additionalProperties":false},
	"outputSchema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]},
	"examples":[]}`

// TestTypedReadsWhatTheSchemaChecked: a key that differs from a field's
// name only in case is another key to the schema, so the decoder does not
// take it for that field: the tool sees the title the schema checked.
func TestTypedReadsWhatTheSchemaChecked(t *testing.T) {
	set, err := schema.Load(fstest.MapFS{"note.json": {Data: []byte(noteContract)}})
	if err != nil {
		t.Fatal(err)
	}
	type note struct {
		Note struct {
			Title string `json:"title"`
		} `json:"note"`
	}
	title := toolkit.Typed(func(_ context.Context, _ toolkit.Call, in note) (toolkit.Result, error) {
		return toolkit.Result{Data: map[string]string{"title": in.Note.Title}}, nil
	})
	p, err := toolkit.NewPipeline(set, []toolkit.Tool{{Name: "note", Handler: title}}, toolkit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ args, want string }{
		{`{"note":{"title":"short"}}`, `{"title":"short"}`},
		{`{"note":{"TITLE":"far too long for the schema"}}`, `{"title":""}`},
		{`{"note":{"title":"short","Title":"far too long for the schema"}}`, `{"title":"short"}`},
		{`{"note":{"Title":"far too long for the schema","title":"short"}}`, `{"title":"short"}`},
	}
	for _, tt := range tests {
		out := p.Invoke(context.Background(), toolkit.Request{Tool: "note", Tenant: "t", Args: json.RawMessage(tt.args)})
		if !out.OK || string(out.Result) != tt.want {
			t.Errorf("%s: %s %+v, want %s", tt.args, out.Result, out.Error, tt.want)
		}
	}
}
