// Package lambdainvoke lets the deployed gateway run tools in their own
// Lambda functions: a toolkit.Invoker that sends the call as a direct
// invocation ({"tool","args","tenant","requestId"}) and decodes the outcome.
// Every forwarded call is observed (one log line and EMF record), including
// invoke failures with their cause.
package lambdainvoke

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// API is the part of the Lambda client the invoker uses.
type API interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, opts ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// Invoker calls tool functions by name. It is a toolkit.Catalog.
type Invoker struct {
	toolkit.ServedTools
	api       API
	functions map[string]string // canonical tool name → function name or ARN
	observer  toolkit.Observer
	now       func() time.Time
}

var _ toolkit.Catalog = (*Invoker)(nil)

// New returns an invoker for the tools in functions; obs (which may be
// nil) sees every forwarded call.
func New(api API, contracts *schema.Set, functions map[string]string, obs toolkit.Observer) (*Invoker, error) {
	names := make([]string, 0, len(functions))
	for name := range functions {
		names = append(names, name)
	}
	served, err := toolkit.NewServedTools(contracts, names)
	if err != nil {
		return nil, fmt.Errorf("function map names %w", err)
	}
	return &Invoker{ServedTools: served, api: api, functions: functions, observer: obs, now: time.Now}, nil
}

// Invoke implements toolkit.Invoker: it forwards the call, observed.
func (i *Invoker) Invoke(ctx context.Context, req toolkit.Request) toolkit.Outcome {
	return toolkit.Observe(ctx, i.observer, i.now, req, func() toolkit.Outcome { return i.invoke(ctx, req) })
}

// invoke forwards one call. When the call fails here (rather than in the
// tool), the outcome's Cause says why, for the log only.
func (i *Invoker) invoke(ctx context.Context, req toolkit.Request) toolkit.Outcome {
	name, err := i.Resolve(ctx, req.Tool)
	if err != nil {
		if name == "" {
			name = req.Tool
		}
		return toolkit.Fail(name, req.RequestID, err)
	}
	fail := func(err error) toolkit.Outcome { return toolkit.Fail(name, req.RequestID, err) }
	req.Tool = name
	payload, err := json.Marshal(req)
	if err != nil {
		return fail(fmt.Errorf("encode invocation: %w", err))
	}
	fn := i.functions[name]
	res, err := i.api.Invoke(ctx, &lambda.InvokeInput{FunctionName: &fn, Payload: payload})
	if err != nil {
		return fail(invokeError(name, fn, err))
	}
	if res.FunctionError != nil {
		return fail(fmt.Errorf("function %s failed (%s): %s", fn, *res.FunctionError, res.Payload))
	}
	var out toolkit.Outcome
	if err := json.Unmarshal(res.Payload, &out); err != nil {
		return fail(fmt.Errorf("decode outcome of %s: %w", fn, err))
	}
	if !out.OK && out.Error == nil {
		return fail(fmt.Errorf("function %s returned an outcome with neither result nor error", fn))
	}
	return out
}

func invokeError(tool, fn string, err error) error {
	err = fmt.Errorf("invoke %s: %w", fn, err)
	var throttled *types.TooManyRequestsException
	if errors.As(err, &throttled) {
		e := toolerr.New(toolerr.RateLimited, "%s is busy; retry shortly", tool)
		e.RetryAfter = 1
		e.Cause = err
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	e := toolerr.New(toolerr.UpstreamError, "could not reach the %s function", tool)
	e.Cause = err
	return e
}
