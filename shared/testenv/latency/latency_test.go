package latency

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	tests := []struct {
		name    string
		samples []time.Duration
		p       float64
		want    time.Duration
	}{
		{"no samples", nil, 50, 0},
		{"one sample", ms(7), 50, 7 * time.Millisecond},
		{"one sample p99", ms(7), 99, 7 * time.Millisecond},
		{"odd count p50 is the middle", ms(5, 1, 3), 50, 3 * time.Millisecond},
		{"even count p50 is the lower middle", ms(4, 1, 3, 2), 50, 2 * time.Millisecond},
		{"p99 of 100 is the 99th", ms(seq(100)...), 99, 99 * time.Millisecond},
		{"p99 of 50 is the largest", ms(seq(50)...), 99, 50 * time.Millisecond},
		{"p100 is the largest", ms(9, 2, 5), 100, 9 * time.Millisecond},
		{"a tiny p is the smallest", ms(9, 2, 5), 0.1, 2 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percentile(tt.samples, tt.p); got != tt.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.samples, tt.p, got, tt.want)
			}
		})
	}
}

// seq is 1..n.
func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func TestPercentileKeepsTheSamples(t *testing.T) {
	s := []time.Duration{3, 1, 2}
	Percentile(s, 50)
	if s[0] != 3 || s[1] != 1 || s[2] != 2 {
		t.Errorf("the samples were reordered: %v", s)
	}
}

func TestMs(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0.00"},
		{1500 * time.Microsecond, "1.50"},
		{2*time.Second + 341*time.Microsecond, "2000.34"},
	}
	for _, tt := range tests {
		if got := Ms(tt.d); got != tt.want {
			t.Errorf("Ms(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
