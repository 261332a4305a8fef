// Package gcsettings tunes the Go garbage collector for Toolshed's
// processes.
//
// In Lambda, work is short requests that make mostly short-lived garbage
// over a small live heap, so the default GOGC=100 spends much of the CPU
// collecting at load. Functions run with GOGC=400 and a soft memory limit
// below the function's memory, so the heap may grow further between
// collections but never past the limit: when it nears the limit the
// collector runs as often as it must.
//
// The local server runs with GOGC=50 (LocalPercent): its heap may grow by
// half the live heap between collections. It holds the repository it
// serves and its search indexes, hundreds of megabytes that live as long as
// the process, which the default would let double; and the memory a load
// of requests adds is the growth the collector allows, so it stays in
// proportion to what the server holds. A small heap is then collected every
// few megabytes, which is cheap (there is little to mark) as long as
// requests make little garbage: a tools/call makes about 30 KB since the
// MCP SDK's JSON decoder no longer takes 32 KiB per decode (shared/third_party;
// with it, 320 KB, and a load paid for the collections in throughput).
//
// GOGC and GOMEMLIMIT in the environment always win.
package gcsettings

import (
	"math"
	"runtime/debug"
	"strconv"
)

// Percent is the GOGC value Lambda functions use.
const Percent = 400

// LocalPercent is the GOGC value of the local server.
const LocalPercent = 50

// lambdaShare is the part of a Lambda function's memory the heap may use;
// the rest is for the runtime, stacks and the binary.
const lambdaShare = 0.75

// Settings are what Apply chose; zero fields were left to the environment.
type Settings struct {
	Percent    int   // GOGC
	LimitBytes int64 // GOMEMLIMIT
}

// Choose returns the settings for an environment. In Lambda
// (AWS_LAMBDA_FUNCTION_MEMORY_SIZE set, in MB): Percent unless GOGC is
// set, and 3/4 of the function's memory unless GOMEMLIMIT is set.
// Elsewhere: LocalPercent unless GOGC is set, and no memory limit.
func Choose(getenv func(string) string) Settings {
	var s Settings
	mb, err := strconv.Atoi(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"))
	inLambda := err == nil && mb > 0
	switch {
	case getenv("GOGC") != "":
	case inLambda:
		s.Percent = Percent
	default:
		s.Percent = LocalPercent
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
	return s
}
