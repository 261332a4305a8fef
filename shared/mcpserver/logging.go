package mcpserver

import (
	"context"
	"log/slog"
)

// debugOnly is the slog handler the SDK logs through: it lowers every
// record to at most DEBUG. The SDK writes several INFO lines per request
// ("session initialized", "session connected", ...), which would bury the
// one INFO line per call that matters (the pipeline's tool_call line, which
// does not go through this handler). At the default INFO level they are
// dropped; TOOLSHED_LOG_LEVEL=debug shows them.
type debugOnly struct{ next slog.Handler }

var _ slog.Handler = debugOnly{}

// Enabled reports whether the lowered record would be handled.
func (h debugOnly) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, min(level, slog.LevelDebug))
}

// Handle passes r on at DEBUG when it was above.
func (h debugOnly) Handle(ctx context.Context, r slog.Record) error {
	r.Level = min(r.Level, slog.LevelDebug)
	return h.next.Handle(ctx, r)
}

// WithAttrs keeps the lowering on the derived handler.
func (h debugOnly) WithAttrs(attrs []slog.Attr) slog.Handler {
	return debugOnly{h.next.WithAttrs(attrs)}
}

// WithGroup keeps the lowering on the derived handler.
func (h debugOnly) WithGroup(name string) slog.Handler {
	return debugOnly{h.next.WithGroup(name)}
}
