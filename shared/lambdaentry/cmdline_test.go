package lambdaentry_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionAndHelp: every bootstrap, run by hand, tells its version (the
// one make builds it with) and, with -h, its flags and the README section
// about it.
func TestVersionAndHelp(t *testing.T) {
	tests := []struct{ bootstrap, readme string }{
		{"gateway", "docs/configuration.md"},
		{"tool", "docs/deploy.md"},
		{"authorizer", "docs/deploy.md"},
		{"indexer", "docs/deploy.md"},
	}
	for _, tt := range tests {
		t.Run(tt.bootstrap, func(t *testing.T) {
			bin := filepath.Join(bootstrapDir, tt.bootstrap)
			out, err := exec.Command(bin, "-version").CombinedOutput()
			if want := tt.bootstrap + " " + testVersion + "\n"; err != nil || string(out) != want {
				t.Errorf("-version: %q (%v), want %q", out, err, want)
			}
			out, err = exec.Command(bin, "-h").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "-version") || !strings.Contains(string(out), tt.readme) {
				t.Errorf("-h: %q (%v), want the flags and %s", out, err, tt.readme)
			}
		})
	}
}
