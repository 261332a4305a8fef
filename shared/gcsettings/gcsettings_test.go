package gcsettings_test

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/gcsettings"
)

func TestChoose(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want gcsettings.Settings
	}{
		{"local", nil, gcsettings.Settings{Adaptive: true}},
		{"local, GOGC set", map[string]string{"GOGC": "100"}, gcsettings.Settings{}},
		{"lambda 256 MB", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256"}, gcsettings.Settings{Percent: 400, LimitBytes: 192 << 20}},
		{"lambda 1024 MB", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024"}, gcsettings.Settings{Percent: 400, LimitBytes: 768 << 20}},
		{"lambda, GOGC set", map[string]string{"GOGC": "100", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024"}, gcsettings.Settings{LimitBytes: 768 << 20}},
		{"lambda, GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "100MiB", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256"}, gcsettings.Settings{Percent: 400}},
		{"garbage memory size", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "lots"}, gcsettings.Settings{Adaptive: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gcsettings.Choose(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestPercentFor(t *testing.T) {
	for _, tt := range []struct {
		live uint64
		want int
	}{
		{0, 400},
		{1 << 20, 400},       // exactly 4 MB
		{4 << 20, 100},       // 4 MB
		{16 << 20, 25},       // 4 MB
		{32 << 20, 13},       // an eighth of it, 4 MB
		{128 << 20, 13},      // an eighth of it
		{1 << 30, 13},        // an eighth of it
		{1 << 40, 13},        // an eighth, however large
		{math.MaxUint32, 12}, // no overflow
	} {
		if got := gcsettings.PercentFor(tt.live); got != tt.want {
			t.Errorf("PercentFor(%d MB) = %d, want %d", tt.live>>20, got, tt.want)
		}
	}
}

// TestApply applies each kind of settings to this process; the adaptive
// ones then follow the live heap across collections.
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
	if s := gcsettings.Apply(func(string) string { return "" }); !s.Adaptive {
		t.Fatalf("local settings %+v", s)
	}
	if got := debug.SetGCPercent(-1); got != 400 {
		t.Errorf("adaptive GOGC with a small heap = %d, want 400", got)
	}
	// A live heap of 16 MB (pointer-free, so cheap to keep): after a
	// collection GOGC is at most 25 (4 MB over 16 MB and what else the
	// test holds); once it goes, 400 again.
	ballast := make([]byte, 16<<20)
	waitPercent(t, 20, 25)
	runtime.KeepAlive(ballast)
	ballast = nil
	waitPercent(t, 400, 400)
}

// waitPercent collects until GOGC is between low and high (the cleanup
// that sets it runs on its own goroutine after a collection).
func waitPercent(t *testing.T, low, high int) {
	t.Helper()
	for range 100 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		if got := debug.SetGCPercent(-1); got >= low && got <= high {
			return
		}
	}
	t.Errorf("GOGC = %d, want %d to %d", debug.SetGCPercent(-1), low, high)
}
