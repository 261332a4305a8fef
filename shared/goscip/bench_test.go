package goscip_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolshed/toolshed/shared/goscip"
	"github.com/toolshed/toolshed/shared/testenv/procstat"
)

// BenchmarkGoTree indexes the installed Go's source tree ($(go env
// GOROOT)/src: modules std and cmd), without and with tests, and reports
// the documents, occurrences and SCIP bytes written and the process's
// peak RSS so far (a process's peak only grows: the run with tests is
// measured after the one without).
//
//	go test -run '^$' -bench GoTree -benchtime 1x ./shared/goscip/
//
// The index-go subcommand measured on its own: /usr/bin/time -v
// ./build/local/toolshed index-go [-tests] -o /tmp/go.scip $(go env GOROOT)/src
func BenchmarkGoTree(b *testing.B) {
	src := filepath.Join(goEnv(b, "GOROOT"), "src")
	for _, tests := range []bool{false, true} {
		name := map[bool]string{false: "non-test", true: "tests"}[tests]
		b.Run(name, func(b *testing.B) {
			var stats goscip.Stats
			var err error
			for b.Loop() {
				stats, err = goscip.Emit(context.Background(), src, nil, io.Discard, goscip.Options{Tests: tests})
				if err != nil {
					b.Fatal(err)
				}
			}
			peak, _ := procstat.PeakRSS(os.Getpid())
			b.ReportMetric(float64(stats.Documents), "documents")
			b.ReportMetric(float64(stats.Occurrences), "occurrences")
			b.ReportMetric(float64(stats.Bytes)/(1<<20), "SCIP-MB")
			b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MB")
		})
	}
}
