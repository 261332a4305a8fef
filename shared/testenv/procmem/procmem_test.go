package procmem

import (
	"os"
	"strings"
	"testing"
)

func TestParseVmHWM(t *testing.T) {
	tests := []struct {
		status  string
		want    int64
		wantErr bool
	}{
		{"Name:\tbootstrap\nVmPeak:\t  800000 kB\nVmHWM:\t   23456 kB\nVmRSS:\t   20000 kB\n", 23456 * 1024, false},
		{"Name:\tbootstrap\n", 0, true},
		{"VmHWM:\t 12 MB\n", 0, true},
	}
	for _, tt := range tests {
		got, err := parseVmHWM(strings.NewReader(tt.status))
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("parseVmHWM(%q) = %d, %v; want %d (error %v)", tt.status, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestPeakRSSOfThisProcess(t *testing.T) {
	n, err := PeakRSS(os.Getpid())
	if err != nil || n < 1<<20 {
		t.Errorf("PeakRSS = %d, %v; want at least a megabyte", n, err)
	}
}
