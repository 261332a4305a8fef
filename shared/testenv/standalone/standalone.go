// Package standalone lets a developer program (a benchmark under
// scripts/) use the test fixtures of shared/testenv — the emulators, the
// Lambda harness, repositories in S3 — which take a testing.TB: Run gives
// a function a testing.TB outside `go test`, prints what it logs and why
// it fails, and runs its cleanups when it returns.
package standalone

import (
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
)

// Run calls f once with a testing.TB and returns f's error, or an error
// if f failed the TB (Fatal, Error, FailNow). What f logs, and the
// messages of its failures, go to log; cleanups registered on the TB run
// before Run returns.
func Run(log io.Writer, f func(tb testing.TB) error) error {
	var err error
	ran := false
	// testing.Benchmark is the one way to get a TB outside a test. It may
	// call its function again with a larger b.N: that call is skipped.
	testing.Benchmark(func(b *testing.B) {
		if ran {
			b.SkipNow()
		}
		ran = true
		tb := printing{B: b, log: log}
		defer func() {
			if b.Failed() && err == nil {
				err = errors.New("a fixture failed (see above)")
			}
		}()
		err = f(tb)
	})
	return err
}

// RunStderr is Run logging to the standard error.
func RunStderr(f func(tb testing.TB) error) error { return Run(os.Stderr, f) }

// printing is a testing.TB whose messages are printed: testing.Benchmark
// discards a benchmark's output.
type printing struct {
	*testing.B
	log io.Writer
}

func (p printing) Log(args ...any)                 { fmt.Fprintln(p.log, args...) }
func (p printing) Logf(format string, args ...any) { fmt.Fprintf(p.log, format+"\n", args...) }
func (p printing) Error(args ...any)               { p.Log(args...); p.B.Fail() }
func (p printing) Errorf(format string, args ...any) {
	p.Logf(format, args...)
	p.B.Fail()
}
func (p printing) Fatal(args ...any) { p.Log(args...); p.B.FailNow() }
func (p printing) Fatalf(format string, args ...any) {
	p.Logf(format, args...)
	p.B.FailNow()
}
