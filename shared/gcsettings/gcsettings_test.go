package gcsettings_test

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/toolshed/toolshed/shared/gcsettings"
)

func TestChoose(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want gcsettings.Settings
	}{
		{"local", nil, gcsettings.Settings{Percent: 50}},
		{"local, GOGC set", map[string]string{"GOGC": "100"}, gcsettings.Settings{}},
		{"lambda 256 MB", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256"}, gcsettings.Settings{Percent: 400, LimitBytes: 192 << 20}},
		{"lambda 1024 MB", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024"}, gcsettings.Settings{Percent: 400, LimitBytes: 768 << 20}},
		{"lambda, GOGC set", map[string]string{"GOGC": "100", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024"}, gcsettings.Settings{LimitBytes: 768 << 20}},
		{"lambda, GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "100MiB", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256"}, gcsettings.Settings{Percent: 400}},
		{"garbage memory size", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "lots"}, gcsettings.Settings{Percent: 50}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gcsettings.Choose(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestApply applies the Lambda settings and the local ones to this
// process.
func TestApply(t *testing.T) {
	oldPercent := debug.SetGCPercent(100)
	oldLimit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	})
	gcsettings.Apply(func(k string) string { return map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256"}[k] })
	if got := debug.SetGCPercent(-1); got != 400 {
		t.Errorf("GOGC = %d, want 400", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 192<<20 {
		t.Errorf("memory limit = %d, want %d", got, 192<<20)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	gcsettings.Apply(func(string) string { return "" })
	if got := debug.SetGCPercent(-1); got != 50 {
		t.Errorf("local GOGC = %d, want 50", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("local memory limit = %d, want none", got)
	}
}
