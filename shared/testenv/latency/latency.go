// Package latency summarises measured durations for benchmarks: the
// nearest-rank percentile (p50, p99), and milliseconds to print.
package latency

import (
	"math"
	"slices"
	"strconv"
	"time"
)

// Percentile returns the p-th percentile (0 < p ≤ 100) of ds by the
// nearest-rank method: the smallest sample that at least p% of the samples
// are at or below. It is 0 for no samples. p50 of an even count is the
// lower middle sample, p100 the largest.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// Ms is d in milliseconds with two decimals, e.g. "12.34".
func Ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64)
}
