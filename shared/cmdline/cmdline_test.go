package cmdline

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	c := Command{Name: "gateway", Summary: "the MCP endpoint", Readme: "docs/configuration.md", Version: "v1.2.3",
		Subcommands: []Subcommand{{Name: "index-go", Summary: "write a SCIP index"}}}
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
			"gateway index-go ...   write a SCIP index (gateway index-go -h lists its flags)", "-addr string", "listen address", "-version", "see docs/configuration.md."}},
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

// TestSubcommand: a first argument naming a subcommand runs it with the
// arguments after it and its usage name; any other does not.
func TestSubcommand(t *testing.T) {
	failed := errors.New("failed")
	c := Command{Name: "gateway", Subcommands: []Subcommand{{Name: "index-go",
		Run: func(_ context.Context, name string, args []string, stdout, _ io.Writer) error {
			fmt.Fprintf(stdout, "%s %q", name, args)
			if len(args) > 0 && args[0] == "fail" {
				return failed
			}
			return nil
		}}}}
	tests := []struct {
		name    string
		args    []string
		wantRan bool
		wantOut string
		wantErr error
	}{
		{"no arguments", nil, false, "", nil},
		{"a flag", []string{"-addr", "x"}, false, "", nil},
		{"another word", []string{"index-ts"}, false, "", nil},
		{"the subcommand", []string{"index-go", "-o", "f", "dir"}, true, `toolshed index-go ["-o" "f" "dir"]`, nil},
		{"its error", []string{"index-go", "fail"}, true, `toolshed index-go ["fail"]`, failed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			ran, err := c.subcommand(context.Background(), "toolshed", tt.args, &out, io.Discard)
			if ran != tt.wantRan || !errors.Is(err, tt.wantErr) || out.String() != tt.wantOut {
				t.Errorf("ran %v, err %v, out %q; want %v, %v, %q", ran, err, out.String(), tt.wantRan, tt.wantErr, tt.wantOut)
			}
		})
	}
}
