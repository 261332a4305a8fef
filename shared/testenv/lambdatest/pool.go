package lambdatest

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// Pool runs a function as Lambda scales it: up to Size execution
// environments, each a Function started when an invocation finds none
// idle. An environment whose process ended (it crashed, was killed or
// timed out) is stopped and, like Lambda, the next invocation starts a
// new one in its place.
type Pool struct {
	cfg   Config
	slots chan struct{} // one per environment that may run

	mu      sync.Mutex
	idle    []*Function
	running []*Function // started and not stopped, idle or busy
	started int
	peak    int64 // the largest peak RSS of the environments stopped
	closed  bool
}

// NewPool returns a pool of at most size environments of cfg; none runs
// until invoked. Stop ends them.
func NewPool(cfg Config, size int) *Pool {
	return &Pool{cfg: cfg, slots: make(chan struct{}, max(size, 1))}
}

// Invoke runs one invocation on an idle environment, or a new one.
func (p *Pool) Invoke(ctx context.Context, event []byte) (Response, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return Response{}, ctx.Err()
	}
	defer func() { <-p.slots }()
	fn, err := p.take()
	if err != nil {
		return Response{}, err
	}
	resp, err := fn.Invoke(ctx, event)
	p.give(fn)
	return resp, err
}

// take returns an idle environment whose process still runs, or starts
// one.
func (p *Pool) take() (*Function, error) {
	for {
		fn, err := p.takeIdle()
		if fn == nil || err != nil {
			break
		}
		select {
		case <-fn.Exited():
			p.retire(fn)
		default:
			return fn, nil
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fn, err := Start(p.cfg)
	if err != nil {
		return nil, err
	}
	p.running = append(p.running, fn)
	p.started++
	return fn, nil
}

// takeIdle removes and returns an idle environment, nil when none is.
func (p *Pool) takeIdle() (*Function, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("lambdatest: the pool is stopped")
	}
	n := len(p.idle)
	if n == 0 {
		return nil, nil
	}
	fn := p.idle[n-1]
	p.idle = p.idle[:n-1]
	return fn, nil
}

// give takes back an environment after an invocation: idle again, or
// stopped when its process has ended.
func (p *Pool) give(fn *Function) {
	select {
	case <-fn.Exited():
		p.retire(fn)
	default:
		p.mu.Lock()
		p.idle = append(p.idle, fn)
		p.mu.Unlock()
	}
}

// retire stops an environment and forgets it.
func (p *Pool) retire(fn *Function) {
	if n, err := fn.PeakRSS(); err == nil {
		p.mu.Lock()
		p.peak = max(p.peak, n)
		p.mu.Unlock()
	}
	fn.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = slices.DeleteFunc(p.running, func(f *Function) bool { return f == fn })
	p.idle = slices.DeleteFunc(p.idle, func(f *Function) bool { return f == fn })
}

// Running returns the environments started and not stopped, busy or idle.
func (p *Pool) Running() []*Function {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.running)
}

// Started returns how many environments the pool has started.
func (p *Pool) Started() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// PeakRSS returns the largest peak resident set size, in bytes, of the
// environments so far (Linux only: VmHWM).
func (p *Pool) PeakRSS() int64 {
	peak := func() int64 {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.peak
	}()
	for _, fn := range p.Running() {
		if n, err := fn.PeakRSS(); err == nil {
			peak = max(peak, n)
		}
	}
	return peak
}

// Stop ends every environment.
func (p *Pool) Stop() {
	p.mu.Lock()
	p.closed = true
	running := slices.Clone(p.running)
	p.mu.Unlock()
	for _, fn := range running {
		fn.Stop()
	}
}
