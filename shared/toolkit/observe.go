package toolkit

import (
	"context"
	"time"

	"github.com/toolshed/toolshed/shared/telemetry"
)

// Observer receives one telemetry.Record per call (logging and metrics).
type Observer interface {
	Observe(ctx context.Context, r telemetry.Record)
}

// Observe runs one call and, when obs is not nil, gives obs its Record:
// the tool, who asked, how long the call took and how it ended, with the
// outcome's Cause and Notes. The Pipeline and the Lambda invoker run every
// call through it.
func Observe(ctx context.Context, obs Observer, now func() time.Time, req Request, call func() Outcome) Outcome {
	start := now()
	out := call()
	if obs == nil {
		return out
	}
	rec := telemetry.Record{Tool: out.Tool, Tenant: req.Tenant, RequestID: req.RequestID, Duration: now().Sub(start),
		Cause: out.Cause, Notes: out.Notes}
	if out.Error != nil {
		rec.Code = out.Error.Code
	}
	obs.Observe(ctx, rec)
	return out
}
