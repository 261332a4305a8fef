package localserver_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/dynamotest"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
)

// TestTypeScriptSDKClient runs scripts/sdkclient/check.mjs, the official
// TypeScript SDK client, against the real local server: it lists the tools
// and calls each with an example from its contract, validating the output
// against the outputSchema.
func TestTypeScriptSDKClient(t *testing.T) {
	root := repoRoot(t)
	// The contract examples of the repository tools read the example
	// project the examples test uses.
	base := startServer(t, map[string]string{"TOOLSHED_REPO_DIR": filepath.Join(root, "shared", "toolset", "testdata", "example-repo")})
	out := runSDKScript(t, "check.mjs", base+"/mcp")
	if !strings.Contains(string(out), `ok   hello (example "greets by name")`) {
		t.Error("check.mjs did not call hello with its example")
	}
}

// repoRoot returns the repository's root folder.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := dynamotest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// runSDKScript runs a script of scripts/sdkclient with args and returns
// its output, logged; the test fails if the script does. Node and the npm
// packages (npm ci) are required: the test fails, never skips, when they
// are missing.
func runSDKScript(t *testing.T, script string, args ...string) []byte {
	t.Helper()
	root := repoRoot(t)
	node := emulator.Node(t, "MCP interop test", root, "@modelcontextprotocol/sdk")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("scripts", "sdkclient", script)}, args...)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	t.Logf("%s:\n%s", script, out)
	if err != nil {
		t.Fatalf("%s failed: %v", script, err)
	}
	return out
}

// TestTypeScriptSDKClientResources runs scripts/sdkclient/resources.mjs,
// the official TypeScript SDK client, against the real local server over
// the example project: it lists the resources and templates, reads a file
// resource, completes its path, lists the prompts and gets one, and is
// refused a denied file.
func TestTypeScriptSDKClientResources(t *testing.T) {
	root := repoRoot(t)
	base := startServer(t, map[string]string{"TOOLSHED_REPO_DIR": filepath.Join(root, "shared", "toolset", "testdata", "example-repo")})
	out := runSDKScript(t, "resources.mjs", base+"/mcp", "src/server/auth/AuthService.ts", "src/server/auth/Au")
	if !strings.Contains(string(out), "all checks passed") {
		t.Error("resources.mjs did not pass every check")
	}
}
