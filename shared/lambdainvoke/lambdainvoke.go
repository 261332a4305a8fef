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

// Invoker calls tool functions by name.
type Invoker struct {
	api       API
	functions map[string]string // canonical tool name → function name or ARN
	contracts *schema.Set
	observer  toolkit.Observer
	now       func() time.Time
}

var _ toolkit.Invoker = (*Invoker)(nil)

// New returns an invoker for the tools in functions; obs (which may be
// nil) sees every forwarded call.
func New(api API, contracts *schema.Set, functions map[string]string, obs toolkit.Observer) (*Invoker, error) {
	for name := range functions {
		if c, ok := contracts.Get(name); !ok || c.Name != name {
			return nil, fmt.Errorf("function map names %q, which has no contract", name)
		}
	}
	return &Invoker{api: api, functions: functions, contracts: contracts, observer: obs, now: time.Now}, nil
}

// Served returns the contracts of the tools that have a function, sorted.
func (i *Invoker) Served() []*schema.Contract {
	var out []*schema.Contract
	for _, n := range i.contracts.Names() {
		if _, ok := i.functions[n]; ok {
			c, _ := i.contracts.Get(n)
			out = append(out, c)
		}
	}
	return out
}

// Names implements toolkit.Invoker.
func (i *Invoker) Names() []string {
	names := make([]string, 0, len(i.functions))
	for _, c := range i.Served() {
		names = append(names, c.Name)
	}
	return names
}

// Has implements toolkit.Invoker.
func (i *Invoker) Has(name string) (string, bool) {
	c, ok := i.contracts.Get(name)
	if !ok {
		return "", false
	}
	_, ok = i.functions[c.Name]
	return c.Name, ok
}

// Invoke implements toolkit.Invoker.
func (i *Invoker) Invoke(ctx context.Context, req toolkit.Request) toolkit.Outcome {
	start := i.now()
	out, cause := i.invoke(ctx, req)
	if i.observer != nil {
		rec := toolkit.Record{Tool: out.Tool, Tenant: req.Tenant, RequestID: req.RequestID, Duration: i.now().Sub(start), Cause: cause}
		if out.Error != nil {
			rec.Code = out.Error.Code
		}
		i.observer.Observe(ctx, rec)
	}
	return out
}

// invoke forwards one call. When the call fails here (rather than in the
// tool), it also returns the cause, for the log only.
func (i *Invoker) invoke(ctx context.Context, req toolkit.Request) (toolkit.Outcome, error) {
	fail := func(tool string, err error) (toolkit.Outcome, error) {
		return toolkit.Fail(tool, req.RequestID, err), err
	}
	name, ok := i.Has(req.Tool)
	if !ok {
		return fail(req.Tool, toolerr.New(toolerr.ToolNotFound, "no tool named %q is served here", req.Tool))
	}
	req.Tool = name
	payload, err := json.Marshal(req)
	if err != nil {
		return fail(name, fmt.Errorf("encode invocation: %w", err))
	}
	fn := i.functions[name]
	res, err := i.api.Invoke(ctx, &lambda.InvokeInput{FunctionName: &fn, Payload: payload})
	if err != nil {
		return fail(name, invokeError(name, fn, err))
	}
	if res.FunctionError != nil {
		return fail(name, fmt.Errorf("function %s failed (%s): %s", fn, *res.FunctionError, res.Payload))
	}
	var out toolkit.Outcome
	if err := json.Unmarshal(res.Payload, &out); err != nil {
		return fail(name, fmt.Errorf("decode outcome of %s: %w", fn, err))
	}
	if !out.OK && out.Error == nil {
		return fail(name, fmt.Errorf("function %s returned an outcome with neither result nor error", fn))
	}
	return out, nil
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
