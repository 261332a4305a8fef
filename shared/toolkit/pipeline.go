package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/toolshed/toolshed/shared/caller"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/tenant"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// Limiter decides whether a tenant may call a tool now. It is consulted
// before validation, so a flood of bad requests is limited too.
type Limiter interface {
	Allow(ctx context.Context, tenant, tool string, perMinute int) (Decision, error)
}

// Decision is a Limiter's answer; RetryAfter is set when not Allowed.
type Decision struct {
	Allowed    bool
	RetryAfter time.Duration
}

// Options configure a Pipeline. Zero values mean: no rate limiting, no
// observation, the contract's limits, the real clock.
type Options struct {
	Limiter        Limiter
	LimitOverrides map[string]int // tool → requests per minute
	Observer       Observer
	Now            func() time.Time
}

// Pipeline runs the tools it was built with. It is a Catalog.
type Pipeline struct {
	ServedTools
	handlers map[string]Handler // canonical name → handler
	opts     Options
}

var _ Catalog = (*Pipeline)(nil)

// NewPipeline joins handlers with their contracts. Every tool must have a
// contract; tools without a handler are simply not served.
func NewPipeline(contracts *schema.Set, tools []Tool, opts Options) (*Pipeline, error) {
	p := &Pipeline{handlers: map[string]Handler{}, opts: opts}
	if p.opts.Now == nil {
		p.opts.Now = time.Now
	}
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		names = append(names, t.Name)
		p.handlers[t.Name] = t.Handler
	}
	served, err := NewServedTools(contracts, names)
	if err != nil {
		return nil, fmt.Errorf("tool %w", err)
	}
	p.ServedTools = served
	for tool, n := range opts.LimitOverrides {
		if _, ok := p.handlers[tool]; !ok {
			return nil, fmt.Errorf("rate limit override for %q: no such tool is served", tool)
		}
		if n <= 0 {
			return nil, fmt.Errorf("rate limit override for %q must be positive", tool)
		}
	}
	return p, nil
}

// Invoke runs one call through the whole pipeline, observed. It never
// panics and always returns an Outcome.
func (p *Pipeline) Invoke(ctx context.Context, req Request) Outcome {
	return Observe(ctx, p.opts.Observer, p.opts.Now, req, func() Outcome { return p.invoke(ctx, req) })
}

func (p *Pipeline) invoke(ctx context.Context, req Request) Outcome {
	name, err := p.Resolve(ctx, req.Tool)
	if err != nil {
		if name == "" {
			name = req.Tool
		}
		return Fail(name, req.RequestID, err)
	}
	var notes []string
	res, err := p.run(ctx, name, req, &notes)
	out := Outcome{Tool: name, OK: true, Result: res.data, Message: res.message, RequestID: req.RequestID}
	if err != nil {
		out = Fail(name, req.RequestID, err)
	}
	out.Notes = notes
	return out
}

type ran struct {
	data    json.RawMessage
	message string
}

func (p *Pipeline) run(ctx context.Context, name string, req Request, notes *[]string) (ran, error) {
	c, _ := p.contract(name)
	handler := p.handlers[name]
	if !tenant.Valid(req.Tenant) {
		return ran{}, toolerr.New(toolerr.AccessDenied, "the request carries no valid tenant")
	}
	// The contract's deadline covers everything the call costs, from when
	// the request was accepted (authentication included): the rate limit,
	// input validation, the handler, encoding and validating the result.
	timeout := time.Duration(c.TimeoutMs) * time.Millisecond
	start := caller.From(ctx).Accepted
	if now := time.Now(); start.IsZero() || start.After(now) {
		start = now
	}
	ctx, cancel := context.WithDeadline(ctx, start.Add(timeout))
	defer cancel()
	return runGuarded(ctx, name, c.Annotations.ReadOnlyHint, func(ctx context.Context) (ran, error) {
		if err := p.limit(ctx, c, req.Tenant, notes); err != nil {
			return ran{}, err
		}
		args, err := c.PrepareInput(req.Args)
		if err != nil {
			return ran{}, err
		}
		res, err := handler(ctx, Call{Tool: name, Tenant: req.Tenant, RequestID: req.RequestID, Args: args, Repos: req.Repos})
		if err != nil {
			return ran{}, err
		}
		data, err := json.Marshal(res.Data)
		if err != nil {
			return ran{}, fmt.Errorf("encode %s result: %w", name, err)
		}
		if err := c.ValidateOutput(data); err != nil {
			return ran{}, err
		}
		msg := res.Message
		if msg == "" {
			msg = fmt.Sprintf("%s completed successfully", name)
		}
		return ran{data: data, message: msg}, nil
	})
}

// LimiterShare is the part of a call's deadline the rate-limit check may
// take (a third), so that a limiter whose storage hangs leaves the call
// time to answer.
const LimiterShare = 3

// limit asks the limiter whether the call may run. When the limiter itself
// fails (its storage is down, or does not answer within a LimiterShare of
// the deadline),
// a read-only tool (readOnlyHint) runs anyway — the limit protects
// against load, and refusing reads would turn a counter's outage into an
// outage of every tool — while any other tool is refused with
// STORAGE_ERROR, so that nothing is changed uncounted.
func (p *Pipeline) limit(ctx context.Context, c *schema.Contract, tenant string, notes *[]string) error {
	if p.opts.Limiter == nil {
		return nil
	}
	perMinute := c.RateLimit.RequestsPerMinute
	if n, ok := p.opts.LimitOverrides[c.Name]; ok {
		perMinute = n
	}
	lctx, cancel := context.WithTimeout(ctx, time.Duration(c.TimeoutMs)*time.Millisecond/LimiterShare)
	defer cancel()
	d, err := p.opts.Limiter.Allow(lctx, tenant, c.Name, perMinute)
	if err != nil {
		if c.Annotations.ReadOnlyHint {
			*notes = append(*notes, fmt.Sprintf("rate limiter unavailable, read-only call allowed: %v", err))
			return nil
		}
		state := "is unavailable"
		if errors.Is(err, store.ErrThrottled) {
			state = "is throttling requests"
		}
		e := toolerr.New(toolerr.StorageError, "the rate limiter's storage %s, so %s was not run; nothing was changed, try again", state, c.Name)
		if errors.Is(err, store.ErrThrottled) {
			e.RetryAfter = 1
		}
		e.Cause = fmt.Errorf("rate limiter: %w", err)
		return e
	}
	if d.Allowed {
		return nil
	}
	secs := int((d.RetryAfter + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	e := toolerr.New(toolerr.RateLimited, "rate limit of %d requests per minute for %s exceeded; retry after %d s", perMinute, c.Name, secs).
		With("limit", perMinute).With("window", "1m")
	e.RetryAfter = secs
	return e
}

// Overrun is how long a call whose deadline passed is waited for before
// it is answered TIMEOUT. Tools stop working when their context ends
// (every loop checks it), so within it the call has returned and nothing
// of it is left running; a call that finished its work as the deadline
// passed answers what it did (a write that committed says so).
const Overrun = 250 * time.Millisecond

// runGuarded runs the call in its own goroutine so that work that ignores
// its context still cannot hold the call past the deadline (and Overrun),
// and so that a panic becomes an INTERNAL_ERROR instead of a crash. A call
// that changes things (not readOnly) and is still running when it is
// answered may yet make its change: the TIMEOUT says the outcome is
// unknown.
func runGuarded(ctx context.Context, tool string, readOnly bool, work func(context.Context) (ran, error)) (ran, error) {
	type result struct {
		res ran
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("panic in tool %s: %v\n%s", tool, r, debug.Stack())}
			}
		}()
		res, err := work(ctx)
		done <- result{res, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		overrun := time.NewTimer(Overrun)
		defer overrun.Stop()
		select {
		case r = <-done:
		case <-overrun.C:
			e := timeoutError(ctx, tool, fmt.Errorf("%w; %s still running %s after its deadline (it ignores its context)", ctx.Err(), tool, Overrun))
			if !readOnly {
				// It may yet make its change.
				e = toolerr.New(toolerr.Timeout, "%s did not finish in time and may still make its change; see the tool's description for whether retrying is safe", tool).
					With("outcome", "unknown")
				e.Cause = fmt.Errorf("%w; still running %s after its deadline", ctx.Err(), Overrun)
			}
			return ran{}, e
		}
	}
	var te *toolerr.Error
	if r.err != nil && ctx.Err() != nil && !errors.As(r.err, &te) {
		// Cut short by the deadline: a tool's plain failure then is its
		// timeout (a storage failure stays one: From says which).
		if c := toolerr.From(r.err).Code; c == toolerr.Internal || c == toolerr.Timeout {
			return ran{}, timeoutError(ctx, tool, r.err)
		}
	}
	return r.res, r.err
}

// timeoutError is a call's TIMEOUT: the tool stopped when its deadline
// passed (the request was cancelled), so it changed nothing.
func timeoutError(ctx context.Context, tool string, cause error) *toolerr.Error {
	e := toolerr.New(toolerr.Timeout, "%s did not finish in time", tool)
	if ctx.Err() == context.Canceled {
		e = toolerr.New(toolerr.Timeout, "the request was cancelled before %s finished", tool)
	}
	e.Cause = cause
	return e
}

// AnswerShare is the part of what is left of a call's time that Gathering
// keeps for answering: encoding the result and checking it against the
// contract's output schema.
const AnswerShare = 5

// Gathering returns the context for work whose partial result is still an
// answer (grep's matches, read_file's dependencies): it ends when ctx
// does, or earlier, once all but an AnswerShare of the time ctx has left is
// spent, so that the call answers with what was gathered by then instead
// of TIMEOUT. A ctx without a deadline gives a context that ends with it.
func Gathering(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, deadline.Add(-time.Until(deadline)/AnswerShare))
}
