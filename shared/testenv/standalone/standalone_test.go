package standalone

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		f       func(tb testing.TB) error
		wantErr string // "" for none
		wantLog string
	}{
		{"success", func(tb testing.TB) error { tb.Logf("hello %d", 1); return nil }, "", "hello 1\n"},
		{"an error returned", func(tb testing.TB) error { return boom }, "boom", ""},
		{"Fatalf", func(tb testing.TB) error { tb.Fatalf("cannot start %s", "moto"); return nil }, "a fixture failed", "cannot start moto\n"},
		{"Errorf goes on", func(tb testing.TB) error { tb.Errorf("bad %s", "table"); tb.Log("after"); return nil }, "a fixture failed", "bad table\nafter\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			err := Run(&log, tt.f)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Run: %v, want an error containing %q", err, tt.wantErr)
			}
			if log.String() != tt.wantLog {
				t.Errorf("log %q, want %q", log.String(), tt.wantLog)
			}
		})
	}
}

func TestRunCallsOnceAndCleansUp(t *testing.T) {
	calls, cleaned := 0, 0
	err := Run(&bytes.Buffer{}, func(tb testing.TB) error {
		calls++
		tb.Cleanup(func() { cleaned++ })
		return nil
	})
	if err != nil || calls != 1 || cleaned != 1 {
		t.Errorf("err %v, %d calls, %d cleanups; want nil, 1, 1", err, calls, cleaned)
	}
}
