package lambdaentry_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/tools/history"
)

// TestHistoryFunction: the history tools are deployed as one function
// (family.OneFunction) with the git layer, as infra deploys them: every
// history tool reaches the same function, which serves all six; its git
// layer, laid out for the host, runs git with only what the function's
// environment gives it (no /usr/bin); and a snapshot pushed without its
// history is answered RESOURCE_NOT_FOUND saying so by each tool.
func TestHistoryFunction(t *testing.T) {
	d := newDeployment(t)
	fn := d.Tool(t, history.BlameTool)
	for _, tool := range history.Family.Tools {
		if got := d.Tool(t, tool); got != fn {
			t.Errorf("%s is served by %s, want %s (one function for the family)", tool, got.Name, fn.Name)
		}
	}
	cfg := d.ToolConfig(t, history.ListRefsTool)
	if cfg.Name != "toolshed-history" || cfg.MemoryMB != 2048 || len(cfg.Layers) != 1 ||
		cfg.Env["TOOLSHED_TOOL"] != strings.Join(history.Family.Tools, ",") {
		t.Fatalf("the history function: %s, %d MB, layers %v, TOOLSHED_TOOL %q", cfg.Name, cfg.MemoryMB, cfg.Layers, cfg.Env["TOOLSHED_TOOL"])
	}
	layer := cfg.Layers[0]
	git := exec.Command("/bin/sh", "-c", "git version")
	git.Env = []string{"PATH=" + filepath.Join(layer, "bin"), "LD_LIBRARY_PATH=" + filepath.Join(layer, "lib")}
	if out, err := git.CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "git version ") {
		t.Errorf("the layer's git: %v\n%s", err, out)
	}

	s3 := repotest.S3{Moto: d.Moto, Bucket: d.Bucket}
	s3.Publish(t, "acme", "c1", "../toolset/testdata/example-repo")
	inputs := map[string]string{
		history.ListCommitsTool:   `{}`,
		history.GetCommitTool:     `{"commit":"HEAD"}`,
		history.CompareTool:       `{"base":"HEAD~1","head":"HEAD"}`,
		history.BlameTool:         `{"path":"README.md"}`,
		history.SearchCommitsTool: `{"pattern":"x"}`,
		history.ListRefsTool:      `{}`,
	}
	for tool, args := range inputs {
		t.Run(tool, func(t *testing.T) {
			resp := invoke(t, fn, directEvent(tool, args, "acme", "history-"+tool))
			hasFields(t, string(resp.Payload), `{"ok":false,"error":{"code":"RESOURCE_NOT_FOUND"}}`)
			if !strings.Contains(string(resp.Payload), "pushed without its history") {
				t.Errorf("the answer does not say the snapshot has no history: %s", resp.Payload)
			}
		})
	}
}
