// Package toolkit is the shared pipeline every tool call goes through, on
// every route: look up the tool → check the tenant → rate limit → validate
// the input against the contract → run with the contract's deadline →
// validate the output → one outcome, one log line, one metrics record.
package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// Request is one tool invocation. It is also the payload of a direct Lambda
// invocation from the gateway to a tool function.
type Request struct {
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args,omitempty"`
	Tenant    string          `json:"tenant"`
	RequestID string          `json:"requestId,omitempty"`
	// Repos limits the caller to some repositories (caller.Identity.Repos);
	// nil: every repository of the tenant.
	Repos []string `json:"repos,omitempty"`
}

// Outcome is the result of an invocation in a transport-neutral form; the
// envelope package renders it for each route. It is also what a tool
// function returns to the gateway on a direct invocation.
type Outcome struct {
	Tool      string          `json:"tool"`
	OK        bool            `json:"ok"`
	Result    json.RawMessage `json:"result,omitempty"`
	Message   string          `json:"message,omitempty"`
	Error     *ErrorBody      `json:"error,omitempty"`
	RequestID string          `json:"requestId,omitempty"`
	// Cause is the underlying error of a failure and Notes what went wrong
	// without failing the call: both for the log only (see
	// telemetry.Record), never sent.
	Cause error    `json:"-"`
	Notes []string `json:"-"`
}

// ErrorBody is a failure in the vocabulary, safe to show callers.
type ErrorBody struct {
	Code       toolerr.Code   `json:"code"`
	Message    string         `json:"message"`
	Details    map[string]any `json:"details,omitempty"`
	RetryAfter int            `json:"retryAfter,omitempty"`
	Challenge  string         `json:"-"` // WWW-Authenticate of the HTTP answer (toolerr.Error.Challenge)
}

// Fail builds a failed outcome from any error, mapped onto the vocabulary;
// err itself is kept as the Cause.
func Fail(tool, requestID string, err error) Outcome {
	te := toolerr.From(err)
	return Outcome{Tool: tool, RequestID: requestID, Cause: err, Error: &ErrorBody{
		Code: te.Code, Message: te.Message, Details: te.Details, RetryAfter: te.RetryAfter, Challenge: te.Challenge,
	}}
}

// Invoker runs tool calls: the in-process Pipeline locally, the Lambda
// client in the deployed gateway.
type Invoker interface {
	Invoke(ctx context.Context, req Request) Outcome
	// Has reports whether a tool (or alias) is served, with its canonical name.
	Has(name string) (canonical string, ok bool)
	// Names returns the canonical names of the served tools, sorted.
	Names() []string
}

// Call is what a tool handler receives: validated arguments (contract
// defaults filled in) and who is asking.
type Call struct {
	Tool      string
	Tenant    string
	RequestID string
	Args      json.RawMessage
	// Repos limits the caller to some repositories (nil: every one);
	// repository tools apply it through shared/reposcope.
	Repos []string
}

// Result is a successful tool result; Message is the human-readable line of
// the task-API envelope of POST /mcp/tool/{name} (a default is used when
// empty).
type Result struct {
	Data    any
	Message string
}

// Handler runs one tool. Errors should be *toolerr.Error for expected
// failures; anything else becomes INTERNAL_ERROR.
type Handler func(ctx context.Context, call Call) (Result, error)

// Tool binds a contract name to its handler.
type Tool struct {
	Name    string
	Handler Handler
}

// Typed adapts a handler that takes decoded arguments of type In. The
// arguments are decoded as the contract's schema validated them: each key
// sets the field of exactly its name (schema.Unmarshal), so a key that
// differs only in case, which an open object's schema lets through, never
// stands in for a field the schema checked.
func Typed[In any](fn func(ctx context.Context, call Call, in In) (Result, error)) Handler {
	return func(ctx context.Context, call Call) (Result, error) {
		var in In
		if err := schema.Unmarshal(call.Args, &in); err != nil {
			// The schema has accepted the input, yet Go cannot hold it,
			// e.g. 1.0 for an int field or a number beyond its range.
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) && ute.Field != "" {
				return Result{}, toolerr.New(toolerr.InvalidInput, "%s: must be a %s", ute.Field, goTypeName(ute.Type.Kind()))
			}
			return Result{}, fmt.Errorf("decode %s arguments: %w", call.Tool, err)
		}
		return fn(ctx, call, in)
	}
}

func goTypeName(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "whole number in range, written without a fraction"
	case reflect.Float32, reflect.Float64:
		return "number in range"
	default:
		return "value of the type the schema gives"
	}
}
