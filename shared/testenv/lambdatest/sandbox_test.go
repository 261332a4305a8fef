package lambdatest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/proclimit"
)

// TestMemorySizeEnforced: a function that allocates past its memory size
// is killed, and the invocation fails as Lambda reports it; one within it
// is not. Without a writable cgroup, RLIMIT_AS holds it instead (the Go
// runtime then exits on its own), and the error type is the same.
func TestMemorySizeEnforced(t *testing.T) {
	tests := []struct {
		name     string
		noCgroup bool
		allocMB  int
		wantMsg  string // "" for success
	}{
		{"within", false, 40, ""},
		{"past it, cgroup", false, 400, "Error: Runtime exited with error: signal: killed"},
		{"past it, RLIMIT_AS", true, 2000, "Error: Runtime exited with error: exit status 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.noCgroup {
				old := proclimit.FS
				proclimit.FS = t.TempDir()
				t.Cleanup(func() { proclimit.FS = old })
			}
			fn := startEcho(t, Config{MemoryMB: 128, Timeout: 10 * time.Second})
			t.Logf("limits held by %s", fn.Limits())
			if tt.noCgroup != strings.HasPrefix(fn.Limits(), "RLIMIT_AS") {
				t.Fatalf("limits held by %q", fn.Limits())
			}
			got := invoke(t, fn, `{"allocMB":`+itoa(tt.allocMB)+`}`)
			if tt.wantMsg == "" {
				if got.FunctionError != "" {
					t.Fatalf("got %+v (payload %s)\n%s", got, got.Payload, fn.Output())
				}
				return
			}
			want := `{"errorMessage":"RequestId: ` + got.RequestID + ` ` + tt.wantMsg + `","errorType":"Runtime.OutOfMemory"}`
			if got.FunctionError != "Unhandled" || got.ErrorType != ErrorOutOfMemory || string(got.Payload) != want {
				t.Errorf("got %+v (payload %s), want %s", got, got.Payload, want)
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestFrozenBetweenInvocations: a goroutine a handler started makes no
// progress between one invocation's answer and the next invocation, as
// Lambda freezes the execution environment; within invocations it runs.
func TestFrozenBetweenInvocations(t *testing.T) {
	fn := startEcho(t, Config{Timeout: 5 * time.Second})
	read := func(event string) (now, atLastReturn int64) {
		t.Helper()
		resp := invoke(t, fn, event)
		var got struct{ Now, AtLastReturn int64 }
		if err := json.Unmarshal(resp.Payload, &got); err != nil {
			t.Fatalf("%s: %v", resp.Payload, err)
		}
		return got.Now, got.AtLastReturn
	}
	read(`{"count":"start"}`)
	var moved int64
	for range 3 {
		time.Sleep(500 * time.Millisecond) // 500 ticks, were it running
		now, atLastReturn := read(`{"count":"read"}`)
		moved = max(moved, now-atLastReturn)
	}
	// Between the handler's return and the freeze the runtime posts the
	// answer and asks for the next one: a tick or two at most.
	if moved > 20 {
		t.Errorf("the goroutine counted %d ms between invocations, frozen for 500 ms", moved)
	}
	t.Logf("the goroutine counted at most %d ticks between invocations (limits: %s)", moved, fn.Limits())
	spin := invoke(t, fn, `{"sleepMs":300}`)
	if spin.FunctionError != "" {
		t.Fatal(string(spin.Payload))
	}
	if now, _ := read(`{"count":"read"}`); now < 100 {
		t.Errorf("the goroutine counted %d ticks in all, running during a 300 ms invocation", now)
	}
}

// TestInitPastItsLimit: an init that runs past Lambda's 10 seconds is
// ended; the first invocation runs it again within the function timeout:
// too slow again, the invocation times out; quick the second time, it
// succeeds and the cold start took the 10 seconds and the retry.
func TestInitPastItsLimit(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		env     func(dir string) map[string]string
		want    string // the error type, "" for success
	}{
		{"retried init too slow", 2 * time.Second, func(string) map[string]string {
			return map[string]string{"ECHO_INIT_SLEEP_MS": "11000"}
		}, ErrorTimeout},
		{"retried init quick", 5 * time.Second, func(dir string) map[string]string {
			return map[string]string{"ECHO_INIT_SLEEP_MS": "11000", "ECHO_INIT_SLOW_ONCE": filepath.Join(dir, "warm")}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fn := startEcho(t, Config{Timeout: tt.timeout, Env: tt.env(t.TempDir())})
			if _, err := fn.InitDuration(context.Background()); err == nil || !strings.Contains(err.Error(), "past Lambda's 10s limit") {
				t.Errorf("InitDuration: %v", err)
			}
			if !strings.Contains(fn.Output(), "INIT_REPORT Init Duration: 10000.00 ms Phase: init Status: timeout") {
				t.Errorf("no INIT_REPORT in the output:\n%s", fn.Output())
			}
			got := invoke(t, fn, `{"echo":"hi"}`)
			if got.ErrorType != tt.want {
				t.Fatalf("got %+v (payload %s)\n%s", got, got.Payload, fn.Output())
			}
			if tt.want == ErrorTimeout {
				want := `{"errorMessage":"RequestId: ` + got.RequestID + ` Error: Task timed out after 2.00 seconds","errorType":"Sandbox.Timedout"}`
				if string(got.Payload) != want {
					t.Errorf("payload %s, want %s", got.Payload, want)
				}
				return
			}
			if init, err := fn.InitDuration(context.Background()); err != nil || init < InitLimit {
				t.Errorf("InitDuration after the retry = %v, %v; want the limit and the retry", init, err)
			}
		})
	}
}

// TestKillWhileFreezing: a function killed while its runtime freezes it
// (the runtime asked for its next invocation as the kill came) ends: a
// freeze after the kill's thaw would hold the killed process, frozen,
// forever.
func TestKillWhileFreezing(t *testing.T) {
	for range 20 {
		fn := startEcho(t, Config{})
		invoke(t, fn, `{"echo":"hi"}`)
		stop := make(chan struct{})
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
					fn.freeze()
				}
			}
		}()
		killed := make(chan struct{})
		go func() { fn.Kill(); close(killed) }()
		select {
		case <-killed:
		case <-time.After(10 * time.Second):
			close(stop)
			fn.thaw()
			t.Fatal("Kill did not return: the killed process was frozen again")
		}
		close(stop)
	}
}
