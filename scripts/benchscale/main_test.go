package main

import (
	"slices"
	"testing"
	"time"
)

func TestParseSizes(t *testing.T) {
	tests := []struct {
		in      string
		want    []size
		wantErr bool
	}{
		{"1k,10k,30k,100k", []size{{"1k", 1000}, {"10k", 10000}, {"30k", 30000}, {"100k", 100000}}, false},
		{"500", []size{{"500", 500}}, false},
		{" 2K , 3k", []size{{"2k", 2000}, {"3k", 3000}}, false},
		{"", nil, true},
		{"10m", nil, true},
		{"0", nil, true},
		{"-1k", nil, true},
		{"1k,,2k", nil, true},
	}
	for _, tt := range tests {
		got, err := parseSizes(tt.in)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("parseSizes(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestSpreadIndex(t *testing.T) {
	tests := []struct {
		n, total int
		want     []int
	}{
		{4, 8, []int{0, 2, 4, 6}},
		{3, 10, []int{0, 3, 6}},
		{5, 5, []int{0, 1, 2, 3, 4}},
		{1, 100, []int{0}},
	}
	for _, tt := range tests {
		var got []int
		for k := range tt.n {
			got = append(got, spreadIndex(k, tt.n, tt.total))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("spreadIndex(·, %d, %d) = %v, want %v", tt.n, tt.total, got, tt.want)
		}
	}
}

func TestToolVerdict(t *testing.T) {
	ok := toolRow{memoryMB: 1024, deadline: 5 * time.Second, cold: time.Second, peak: 500 << 20}
	tests := []struct {
		name string
		row  func(toolRow) toolRow
		want string
	}{
		{"within both", func(r toolRow) toolRow { return r }, ""},
		{"cold past the deadline", func(r toolRow) toolRow { r.cold = 6 * time.Second; return r }, "OVER_deadline_cold"},
		{"peak past the memory", func(r toolRow) toolRow { r.peak = 1100 << 20; return r }, "OVER_memory"},
		{"both, and a failed call", func(r toolRow) toolRow {
			r.cold, r.peak, r.problem = 6*time.Second, 1100<<20, "call 0: TIMEOUT"
			return r
		}, "OVER_deadline_cold OVER_memory call 0: TIMEOUT"},
	}
	for _, tt := range tests {
		if got := toolVerdict(tt.row(ok)); got != tt.want {
			t.Errorf("%s: toolVerdict = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestIndexVerdict(t *testing.T) {
	tests := []struct {
		row  pushRow
		want string
	}{
		{pushRow{peak: 1500 << 20}, ""},
		{pushRow{peak: 3000 << 20}, "OVER_memory"},
		{pushRow{peak: 3000 << 20, problem: "indexer: Sandbox.Timedout"}, "OVER_memory indexer: Sandbox.Timedout"},
		{pushRow{problem: "push failed: exit status 1"}, "push failed: exit status 1"},
	}
	for _, tt := range tests {
		if got := indexVerdict(tt.row); got != tt.want {
			t.Errorf("indexVerdict(%+v) = %q, want %q", tt.row, got, tt.want)
		}
	}
}
