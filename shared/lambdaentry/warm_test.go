package lambdaentry_test

import (
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/lambdaentry"
	"github.com/toolshed/toolshed/shared/schema"
)

// TestWarmTime: an init warms up for at most half the shortest deadline
// of the tools its function serves, and never past InitWarmTime, so that
// a cold call (init and first call) fits in the call's deadline.
func TestWarmTime(t *testing.T) {
	tests := []struct {
		name     string
		timeouts []int // ms
		want     time.Duration
	}{
		{"no tools", nil, lambdaentry.InitWarmTime},
		{"a 5 s tool", []int{5000}, 2500 * time.Millisecond},
		{"the shortest of two", []int{10000, 3000}, 1500 * time.Millisecond},
		{"a long deadline", []int{60000}, lambdaentry.InitWarmTime},
		{"no deadline", []int{0}, lambdaentry.InitWarmTime},
	}
	for _, tt := range tests {
		var served []*schema.Contract
		for _, ms := range tt.timeouts {
			served = append(served, &schema.Contract{TimeoutMs: ms})
		}
		if got := lambdaentry.WarmTime(served); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
