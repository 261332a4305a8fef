package lambdaentry_test

import (
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/lambdaentry"
)

// TestWarmTime: an init warms up for at most half the shortest deadline
// of the tools its function serves, and never past InitWarmTime, so that
// a cold call (init and first call) fits in the call's deadline.
func TestWarmTime(t *testing.T) {
	tests := []struct {
		name      string
		deadlines []time.Duration
		want      time.Duration
	}{
		{"no tools", nil, lambdaentry.InitWarmTime},
		{"a 5 s tool", []time.Duration{5 * time.Second}, 2500 * time.Millisecond},
		{"the shortest of two", []time.Duration{10 * time.Second, 3 * time.Second}, 1500 * time.Millisecond},
		{"a long deadline", []time.Duration{time.Minute}, lambdaentry.InitWarmTime},
		{"no deadline", []time.Duration{0}, lambdaentry.InitWarmTime},
	}
	for _, tt := range tests {
		if got := lambdaentry.WarmTime(tt.deadlines...); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
