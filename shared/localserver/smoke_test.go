package localserver_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolshed/toolshed/shared/smoke"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
)

// TestSmoke runs the smoke test (scripts/smoke) against the local server
// over the example repository: every tool's first contract example on the
// three routes, the envelopes and output schemas checked.
func TestSmoke(t *testing.T) {
	repoDir, err := filepath.Abs("../toolset/testdata/example-repo")
	if err != nil {
		t.Fatal(err)
	}
	base := startServer(t, map[string]string{"TOOLSHED_REPO_DIR": repoDir})
	report, err := smoke.Run(context.Background(), smoke.Options{URL: base})
	if err != nil {
		t.Fatal(err)
	}
	tooltest.CheckSmoke(t, "the local server", report)
	if !slices.Equal(report.Tools, served) || len(report.Calls) != len(served)*len(smoke.Routes) {
		t.Errorf("checked %v in %d calls, want %v on %d routes", report.Tools, len(report.Calls), served, len(smoke.Routes))
	}
}
