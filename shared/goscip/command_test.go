package goscip_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/goscip"
)

// TestCommand: index-go writes the index to -o or standard output and a
// summary to standard error; -h prints the usage; a run that fails leaves
// no output file.
func TestCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "index.scip")
	tests := []struct {
		name       string
		args       []string
		wantErr    string
		wantStderr string
		wantFile   bool
		wantStdout bool
	}{
		{"-h", []string{"-h"}, "", "Usage: toolshed index-go [flags] DIR [patterns]", false, false},
		{"no DIR", nil, "DIR is missing", "Usage:", false, false},
		{"a bad flag", []string{"-nope", fixture}, "flag provided but not defined: -nope", "Usage:", false, false},
		{"to a file", []string{"-o", out, "-tests", "-module-version", "v1", fixture, "./shapes"}, "",
			"index-go: 1 modules, 2 packages", true, false},
		{"to stdout", []string{fixture, "./server"}, "", "index-go: 1 modules, 1 packages", false, true},
		{"a limit", []string{"-o", out, "-max-documents", "1", fixture}, "index limit reached: 1 documents", "1 documents", false, false},
		{"not a directory", []string{"-o", out, filepath.Join(fixture, "go.mod")}, "is not a directory", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(out)
			var stdout, stderr bytes.Buffer
			err := goscip.Command(context.Background(), "toolshed index-go", tt.args, &stdout, &stderr)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr %q, want %q in it", stderr.String(), tt.wantStderr)
			}
			data, ferr := os.ReadFile(out)
			if tt.wantFile != (ferr == nil) {
				t.Fatalf("output file: %v, want one: %v", ferr, tt.wantFile)
			}
			if tt.wantFile && len(decode(t, data).Documents) == 0 {
				t.Error("no documents in the output file")
			}
			if tt.wantStdout != (stdout.Len() > 0) || tt.wantStdout && len(decode(t, stdout.Bytes()).Documents) == 0 {
				t.Errorf("%d bytes on stdout, want an index: %v", stdout.Len(), tt.wantStdout)
			}
		})
	}
}
