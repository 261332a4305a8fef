package localserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTypeScriptSDKClient runs scripts/sdkclient/check.mjs, the official
// TypeScript SDK client, against the real local server: it lists the tools
// and calls each with an example from its contract, validating the output
// against the outputSchema. Node and the npm packages (npm ci) are
// required: the test fails, never skips, when they are missing.
func TestTypeScriptSDKClient(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is required for the MCP interop test (Node 20): %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("@modelcontextprotocol/sdk is not installed; run npm ci in %s: %v", root, err)
	}
	// The contract examples of the repository tools read the example
	// project the examples test uses.
	base := startServer(t, map[string]string{"TOOLSHED_REPO_DIR": filepath.Join(root, "shared", "toolset", "testdata", "example-repo")})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("scripts", "sdkclient", "check.mjs"), base+"/mcp")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	t.Logf("check.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("check.mjs failed: %v", err)
	}
	if !strings.Contains(string(out), `ok   hello (example "greets by name")`) {
		t.Error("check.mjs did not call hello with its example")
	}
}
