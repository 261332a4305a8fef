package cmdline

import (
	"flag"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	c := Command{Name: "gateway", Summary: "the MCP endpoint", Readme: "docs/configuration.md", Version: "v1.2.3"}
	tests := []struct {
		name     string
		args     []string
		wantDone bool
		wantOut  []string // lines the output must contain, in order
	}{
		{"no flags", nil, false, nil},
		{"its own flag", []string{"-addr", "127.0.0.1:9000"}, false, nil},
		{"-version", []string{"-version"}, true, []string{"gateway v1.2.3\n"}},
		{"--version", []string{"--version"}, true, []string{"gateway v1.2.3\n"}},
		{"-h", []string{"-h"}, true, []string{"gateway v1.2.3: the MCP endpoint", "Usage: gateway [flags]",
			"-addr string", "listen address", "-version", "see docs/configuration.md."}},
		{"an unknown flag", []string{"-nope"}, true, []string{"flag provided but not defined: -nope", "Usage: gateway [flags]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
			fs.String("addr", "127.0.0.1:8000", "listen address")
			var out strings.Builder
			if done := c.parse(fs, tt.args, &out); done != tt.wantDone {
				t.Errorf("done %v, want %v", done, tt.wantDone)
			}
			rest := out.String()
			for _, want := range tt.wantOut {
				i := strings.Index(rest, want)
				if i < 0 {
					t.Fatalf("output %q lacks %q (in order)", out.String(), want)
				}
				rest = rest[i+len(want):]
			}
			if tt.wantOut == nil && out.Len() > 0 {
				t.Errorf("unexpected output %q", out.String())
			}
		})
	}
}
