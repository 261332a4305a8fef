package wiring

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/telemetry"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// PipelineOptions configure Pipeline.
type PipelineOptions struct {
	// Limiter counts calls; nil means no rate limiting.
	Limiter toolkit.Limiter
	// RateLimits override contracts' limits (tool → requests per minute);
	// overrides for tools the pipeline does not serve are ignored.
	RateLimits map[string]int
	Log        *slog.Logger
	Metrics    io.Writer // EMF destination; nil for none
	Now        func() time.Time
}

// Pipeline serves tools with their contracts from contracts/, the limiter
// and telemetry (one log line, and optionally one EMF record, per call).
func Pipeline(tools []toolkit.Tool, o PipelineOptions) (*toolkit.Pipeline, error) {
	set, err := schema.Load(contracts.FS)
	if err != nil {
		return nil, fmt.Errorf("load contracts: %w", err)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	opts := toolkit.Options{
		Limiter:        o.Limiter,
		Observer:       telemetry.NewObserver(o.Log, o.Metrics),
		LimitOverrides: map[string]int{},
		Now:            o.Now,
	}
	for _, t := range tools {
		if n, ok := o.RateLimits[t.Name]; ok {
			opts.LimitOverrides[t.Name] = n
		}
	}
	return toolkit.NewPipeline(set, tools, opts)
}
