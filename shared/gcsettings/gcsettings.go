// Package gcsettings tunes the Go garbage collector for Toolshed's
// processes.
//
// In Lambda, work is short requests that make mostly short-lived garbage
// (above all the MCP SDK's JSON decoding) over a small live heap, so the
// default GOGC=100 spends a third of the CPU collecting at load. Functions
// run with GOGC=400 and a soft memory limit below the function's memory,
// so the heap may grow further between collections but never past the
// limit: when it nears the limit the collector runs as often as it must.
//
// The local server also holds the repository it serves and its search
// indexes, hundreds of megabytes that live as long as the process. There
// a fixed GOGC is wrong either way: 400 lets a 250 MB live heap grow to
// 1.25 GB, and 50 still lets a 1 GB one grow by 500 MB. Its GOGC follows
// the live heap instead (Adaptive): after each collection it is set so
// that the heap may grow by an eighth of the live heap, and by at least
// MinHeadroom. A large live heap here is mostly
// file contents and index arenas, memory without pointers that a
// collection does not scan, so collecting that often costs little:
// indexing five copies of the Go tree took 38-41 CPU-s with an eighth and
// 37-39 with half, and its peak resident set was 1.32 GB instead of
// 1.55-1.60. A small heap (an idle server, ~30 MB) grows by MinHeadroom,
// 4 MB: the memory a load of requests adds is the growth the collector
// allows, and a tools/call makes about 30 KB of garbage since the MCP SDK's
// JSON decoder no longer takes 32 KiB per decode (shared/third_party; with
// it, 320 KB per call). With 16 MB, a load of 32 connections added 21 MB
// to the idle server, 3.2 times what it adds to a bare go-sdk server; with
// 4 MB, 8.6 MB (1.3 times) at the same throughput (make bench-mcp).
//
// GOGC and GOMEMLIMIT in the environment always win.
package gcsettings

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
)

// Percent is the GOGC value Lambda functions use.
const Percent = 400

// MinHeadroom is the least an adaptive heap may grow between collections.
const MinHeadroom = 4 << 20

// lambdaShare is the part of a Lambda function's memory the heap may use;
// the rest is for the runtime, stacks and the binary.
const lambdaShare = 0.75

// Settings are what Apply chose; zero fields were left to the environment.
type Settings struct {
	Percent    int   // GOGC
	LimitBytes int64 // GOMEMLIMIT
	// Adaptive: GOGC follows the live heap (see the package comment).
	Adaptive bool
}

// Choose returns the settings for an environment. In Lambda
// (AWS_LAMBDA_FUNCTION_MEMORY_SIZE set, in MB): Percent unless GOGC is
// set, and 3/4 of the function's memory unless GOMEMLIMIT is set.
// Elsewhere: adaptive unless GOGC is set, and no memory limit.
func Choose(getenv func(string) string) Settings {
	var s Settings
	mb, err := strconv.Atoi(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"))
	inLambda := err == nil && mb > 0
	switch {
	case getenv("GOGC") != "":
	case inLambda:
		s.Percent = Percent
	default:
		s.Adaptive = true
	}
	if inLambda && getenv("GOMEMLIMIT") == "" {
		s.LimitBytes = int64(math.Round(float64(mb) * (1 << 20) * lambdaShare))
	}
	return s
}

// Apply chooses the settings for the environment and applies them.
func Apply(getenv func(string) string) Settings {
	s := Choose(getenv)
	if s.Percent != 0 {
		debug.SetGCPercent(s.Percent)
	}
	if s.LimitBytes != 0 {
		debug.SetMemoryLimit(s.LimitBytes)
	}
	if s.Adaptive {
		follow()
	}
	return s
}

// headroomShare is the part of the live heap an adaptive heap may grow by
// between collections: 1/headroomShare.
const headroomShare = 8

// PercentFor is the GOGC that lets a heap of live bytes grow by an eighth
// of them, and by at least MinHeadroom, between collections (between 12
// and Percent).
func PercentFor(live uint64) int {
	if live == 0 {
		return Percent
	}
	headroom := max(live/headroomShare, MinHeadroom)
	return int(min(max(math.Round(float64(headroom)*100/float64(live)), 100/headroomShare), Percent))
}

// follow sets GOGC for the live heap now and after every collection: a
// sentinel object with a cleanup is dropped, and the collection that
// finds it unreachable runs the cleanup, which reads the live heap, sets
// GOGC and drops the next sentinel. An idle process collects only when
// the runtime forces it (every two minutes), so this costs nothing idle.
func follow() {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	current := debug.SetGCPercent(PercentFor(0))
	var arm func()
	arm = func() {
		metrics.Read(sample)
		if p := PercentFor(sample[0].Value.Uint64()); p != current {
			debug.SetGCPercent(p)
			current = p
		}
		// Large enough not to share a block with other small objects.
		runtime.AddCleanup(new([64]byte), func(struct{}) { arm() }, struct{}{})
	}
	arm()
}
