// Package gcsettings tunes the Go garbage collector for Toolshed's
// processes. Their work is short requests that make mostly short-lived
// garbage (above all the MCP SDK's JSON decoding), so the default GOGC=100
// spends a third of the CPU collecting at load. Toolshed runs with GOGC=400
// and a soft memory limit below the memory it has, so the heap may grow
// further between collections but never past the limit: when it nears the
// limit the collector runs as often as it must.
//
// GOGC and GOMEMLIMIT in the environment always win.
package gcsettings

import (
	"math"
	"runtime/debug"
	"strconv"
)

// Percent is the GOGC value Toolshed uses.
const Percent = 400

// LocalLimit is the soft memory limit of a process outside Lambda.
const LocalLimit = 1 << 30

// lambdaShare is the part of a Lambda function's memory the heap may use;
// the rest is for the runtime, stacks and the binary.
const lambdaShare = 0.75

// Settings are what Apply chose; zero fields were left to the environment.
type Settings struct {
	Percent    int   // GOGC
	LimitBytes int64 // GOMEMLIMIT
}

// Choose returns the settings for an environment: Percent unless GOGC is
// set; unless GOMEMLIMIT is set, 3/4 of the Lambda function's memory
// (AWS_LAMBDA_FUNCTION_MEMORY_SIZE, in MB) or LocalLimit outside Lambda.
func Choose(getenv func(string) string) Settings {
	var s Settings
	if getenv("GOGC") == "" {
		s.Percent = Percent
	}
	if getenv("GOMEMLIMIT") == "" {
		s.LimitBytes = LocalLimit
		if mb, err := strconv.Atoi(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")); err == nil && mb > 0 {
			s.LimitBytes = int64(math.Round(float64(mb) * (1 << 20) * lambdaShare))
		}
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
