// Package toolset lists every tool Toolshed implements and assembles the
// pipeline that serves them: contracts, rate limiter and telemetry. The
// local server serves them all; each tool Lambda serves one.
package toolset

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/ratelimit"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/telemetry"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/tools/hello"
	"github.com/toolshed/toolshed/shared/tools/memory"
	"github.com/toolshed/toolshed/shared/tools/sysaudit"
	"github.com/toolshed/toolshed/shared/tools/tasks"
)

// Deps are what tools need from the outside world.
type Deps struct {
	Stores store.Stores
	Now    func() time.Time
}

// All returns every implemented tool.
func All(d Deps) []toolkit.Tool {
	tools := []toolkit.Tool{
		hello.New(),
		sysaudit.New(sysaudit.System()),
	}
	tools = append(tools, tasks.Tools(d.Stores.Tasks, d.Now)...)
	tools = append(tools, memory.Tools(d.Stores.Memory, d.Now)...)
	return tools
}

// Only returns the named tool (canonical name).
func Only(d Deps, name string) ([]toolkit.Tool, error) {
	for _, t := range All(d) {
		if t.Name == name {
			return []toolkit.Tool{t}, nil
		}
	}
	return nil, fmt.Errorf("tool %q is not implemented", name)
}

// Options for NewPipeline.
type Options struct {
	Config  config.Config
	Stores  store.Stores
	Log     *slog.Logger
	Metrics io.Writer // EMF destination; nil for none
	Now     func() time.Time
}

// NewPipeline serves tools with contracts from contracts/, the rate limiter
// over the stores' counters and telemetry.
func NewPipeline(tools []toolkit.Tool, o Options) (*toolkit.Pipeline, error) {
	set, err := schema.Load(contracts.FS)
	if err != nil {
		return nil, fmt.Errorf("load contracts: %w", err)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	opts := toolkit.Options{
		Observer:       telemetry.NewObserver(o.Log, o.Metrics),
		LimitOverrides: map[string]int{},
		Now:            o.Now,
	}
	if o.Stores.Counters != nil {
		opts.Limiter = ratelimit.New(o.Stores.Counters, o.Now)
	}
	for _, t := range tools { // overrides for tools this process does not serve are ignored
		if n, ok := o.Config.RateLimits[t.Name]; ok {
			opts.LimitOverrides[t.Name] = n
		}
	}
	return toolkit.NewPipeline(set, tools, opts)
}
