package procstat

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParseKB(t *testing.T) {
	status := "Name:\tbootstrap\nVmPeak:\t  800000 kB\nVmHWM:\t   23456 kB\nVmRSS:\t   20000 kB\n"
	tests := []struct {
		status, field string
		want          int64
		wantErr       bool
	}{
		{status, "VmHWM", 23456 * 1024, false},
		{status, "VmRSS", 20000 * 1024, false},
		{"Name:\tbootstrap\n", "VmHWM", 0, true},
		{"VmHWM:\t 12 MB\n", "VmHWM", 0, true},
	}
	for _, tt := range tests {
		got, err := parseKB(strings.NewReader(tt.status), tt.field)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("parseKB(%q, %s) = %d, %v; want %d (error %v)", tt.status, tt.field, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		line    string
		want    time.Duration
		wantErr bool
	}{
		{"4242 (toolshed) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 30 0 0 20 0 9 0 100 2000000 5000\n", 2800 * time.Millisecond, false},
		{"7 (a b) c)) R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 1 1 1\n", 30 * time.Millisecond, false},
		{"7 (x) R 1 2\n", 0, true},
		{"no command\n", 0, true},
	}
	for _, tt := range tests {
		got, err := parseStat(tt.line)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("parseStat(%q) = %v, %v; want %v (error %v)", tt.line, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestThisProcess(t *testing.T) {
	if n, err := PeakRSS(os.Getpid()); err != nil || n < 1<<20 {
		t.Errorf("PeakRSS = %d, %v; want at least a megabyte", n, err)
	}
	if n, err := RSS(os.Getpid()); err != nil || n < 1<<20 {
		t.Errorf("RSS = %d, %v; want at least a megabyte", n, err)
	}
	before, err := CPUTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the reading says 20 ms more were spent (on a busy
	// machine that takes longer than 20 ms), for at most 10 s.
	after := before
	for start := time.Now(); after-before < 20*time.Millisecond && time.Since(start) < 10*time.Second; {
		if after, err = CPUTime(os.Getpid()); err != nil {
			t.Fatal(err)
		}
	}
	if after-before < 20*time.Millisecond {
		t.Errorf("CPU time %v after %v and 10 s of spinning", after, before)
	}
}

// fatalRecorder records a Fatal instead of failing the test.
type fatalRecorder struct {
	testing.TB
	fatal string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatal(args ...any) {
	r.fatal = fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// TestWaitIdle spins this process: WaitIdle returns only once the
// spinning has stopped, and fails at its limit when it never does.
func TestWaitIdle(t *testing.T) {
	spin := func(stop <-chan struct{}) {
		for {
			select {
			case <-stop:
				return
			default:
			}
		}
	}
	tests := []struct {
		name     string
		spinFor  time.Duration // 0: until WaitIdle returns
		limit    time.Duration
		wantIdle bool
	}{
		{"busy a while", time.Second, 10 * time.Second, true},
		{"busy throughout", 0, time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stop := make(chan struct{})
			go spin(stop)
			stopped := make(chan time.Time, 1)
			if tt.spinFor > 0 {
				time.AfterFunc(tt.spinFor, func() { close(stop); stopped <- time.Now() })
			}
			rec := &fatalRecorder{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				WaitIdle(rec, os.Getpid(), tt.limit)
			}()
			<-done
			returned := time.Now()
			if tt.spinFor == 0 {
				close(stop)
			}
			if idle := rec.fatal == ""; idle != tt.wantIdle {
				t.Fatalf("idle %v (%q), want %v", idle, rec.fatal, tt.wantIdle)
			}
			if tt.wantIdle {
				if at := <-stopped; returned.Before(at) {
					t.Errorf("WaitIdle returned at %v, before the spinning stopped at %v", returned, at)
				}
			}
		})
	}
}
