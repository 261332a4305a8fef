package lambdainvoke_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/lambdainvoke"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/telemetry"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// lambdaAPI answers every Invoke with the same output or error.
type lambdaAPI struct {
	out *lambda.InvokeOutput
	err error
}

func (l lambdaAPI) Invoke(context.Context, *lambda.InvokeInput, ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	return l.out, l.err
}

// records keeps what the invoker observed.
type records []telemetry.Record

func (r *records) Observe(_ context.Context, rec telemetry.Record) { *r = append(*r, rec) }

func TestInvokeIsObserved(t *testing.T) {
	set, err := schema.Load(contracts.FS)
	if err != nil {
		t.Fatal(err)
	}
	ok, _ := json.Marshal(toolkit.Outcome{Tool: "hello", OK: true, Result: json.RawMessage(`{"greeting":"Hello, A!"}`)})
	refused, _ := json.Marshal(toolkit.Fail("hello", "r", toolerr.New(toolerr.InvalidInput, "name: too long")))
	tests := []struct {
		name      string
		api       lambdaAPI
		wantCode  toolerr.Code
		wantCause string // substring of the logged cause; "" for none
	}{
		{"success", lambdaAPI{out: &lambda.InvokeOutput{Payload: ok}}, "", ""},
		{"tool refuses input", lambdaAPI{out: &lambda.InvokeOutput{Payload: refused}}, toolerr.InvalidInput, ""},
		{"invoke fails", lambdaAPI{err: errors.New("connection refused")}, toolerr.UpstreamError, "invoke fn-hello: connection refused"},
		{"throttled", lambdaAPI{err: &types.TooManyRequestsException{Message: aws.String("slow down")}}, toolerr.RateLimited, "slow down"},
		{"function crashes", lambdaAPI{out: &lambda.InvokeOutput{FunctionError: aws.String("Unhandled"), Payload: []byte(`{"errorMessage":"boom"}`)}}, toolerr.Internal, "boom"},
		{"garbled outcome", lambdaAPI{out: &lambda.InvokeOutput{Payload: []byte(`not json`)}}, toolerr.Internal, "decode outcome of fn-hello"},
		{"empty outcome", lambdaAPI{out: &lambda.InvokeOutput{Payload: []byte(`{"tool":"hello","ok":false}`)}}, toolerr.Internal, "neither result nor error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen records
			inv, err := lambdainvoke.New(tt.api, set, map[string]string{"hello": "fn-hello"}, &seen)
			if err != nil {
				t.Fatal(err)
			}
			out := inv.Invoke(context.Background(), toolkit.Request{Tool: "hello", Args: json.RawMessage(`{"name":"A"}`), Tenant: "acme", RequestID: "r1"})
			if len(seen) != 1 {
				t.Fatalf("observed %d records, want 1", len(seen))
			}
			rec := seen[0]
			if rec.Tool != "hello" || rec.Tenant != "acme" || rec.RequestID != "r1" || rec.Code != tt.wantCode {
				t.Errorf("record %+v, want tool hello, tenant acme, request r1, code %q", rec, tt.wantCode)
			}
			if tt.wantCode == "" != out.OK {
				t.Errorf("outcome %+v", out)
			}
			switch {
			case tt.wantCause == "" && rec.Cause != nil:
				t.Errorf("cause %v, want none (the tool function logs its own failures)", rec.Cause)
			case tt.wantCause != "" && (rec.Cause == nil || !strings.Contains(rec.Cause.Error(), tt.wantCause)):
				t.Errorf("cause %v, want it to mention %q", rec.Cause, tt.wantCause)
			}
			if out.Error != nil && out.Error.Code == toolerr.Internal && out.Error.Message != "internal error" {
				t.Errorf("internal failure shown to the caller: %q", out.Error.Message)
			}
		})
	}
}

func TestUnknownToolIsObserved(t *testing.T) {
	set, _ := schema.Load(contracts.FS)
	var seen records
	inv, err := lambdainvoke.New(lambdaAPI{}, set, map[string]string{"hello": "fn-hello"}, &seen)
	if err != nil {
		t.Fatal(err)
	}
	out := inv.Invoke(context.Background(), toolkit.Request{Tool: "nope", Tenant: "acme"})
	if out.OK || out.Error.Code != toolerr.ToolNotFound || len(seen) != 1 || seen[0].Code != toolerr.ToolNotFound {
		t.Errorf("outcome %+v, records %+v", out, seen)
	}
	if _, err := lambdainvoke.New(lambdaAPI{}, set, map[string]string{"nope": "fn"}, nil); err == nil {
		t.Error("a function map naming a tool without a contract was accepted")
	}
}
