package lambdaentry_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/testenv/deploytest"
	"github.com/toolshed/toolshed/shared/wiring"

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
		cfg.Env[config.Tool.Name()] != strings.Join(history.Family.Tools, ",") {
		t.Fatalf("the history function: %s, %d MB, layers %v, TOOLSHED_TOOL %q", cfg.Name, cfg.MemoryMB, cfg.Layers, cfg.Env[config.Tool.Name()])
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

// TestPushedHistory: scripts/snapshot push uploads a repository's history
// with its snapshot (repotest.GitHistory: a merge, a rename, a binary
// file, a denied .env in history), and the deployed functions read it from
// the bucket as git does: the history function's list_commits and blame
// (kept in the bucket, so a fresh function's blame reads it back), and the
// file tools' "ref" (read_file, list_files, grep_codebase), each function
// copying the history into its own /tmp with the git layer's git.
func TestPushedHistory(t *testing.T) {
	d := newDeployment(t)
	dir := repotest.GitHistory(t)
	snapshot, err := deploytest.BuildSnapshotCLI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if out, err := d.SnapshotPush(t, snapshot, "-tenant", "acme", "-dir", dir, "-index=false").CombinedOutput(); err != nil {
		t.Fatalf("push: %v\n%s", err, out)
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}
	call := func(tool, args string, out any) {
		t.Helper()
		resp := invoke(t, d.Tool(t, tool), directEvent(tool, args, "acme", "pushed-"+tool))
		var env struct {
			OK     bool
			Result json.RawMessage
			Error  json.RawMessage
		}
		if err := json.Unmarshal(resp.Payload, &env); err != nil || !env.OK {
			t.Fatalf("%s %s: %s %v\n%s", tool, args, resp.Payload, err, d.Tool(t, tool).Output())
		}
		if err := json.Unmarshal(env.Result, out); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
	}

	var log struct{ Commits []struct{ Hash string } }
	call(history.ListCommitsTool, `{}`, &log)
	var hashes []string
	for _, c := range log.Commits {
		hashes = append(hashes, c.Hash)
	}
	if want := strings.Fields(git("log", "--format=%H")); !slices.Equal(hashes, want) {
		t.Errorf("list_commits: %v\ngit log:      %v", hashes, want)
	}

	blameLines := func() []string {
		var b struct {
			Complete bool
			Hunks    []struct {
				Commit string
				Lines  int
			}
		}
		call(history.BlameTool, `{"path":"src/app.go"}`, &b)
		var per []string
		for _, h := range b.Hunks {
			for range h.Lines {
				per = append(per, h.Commit)
			}
		}
		if !b.Complete {
			t.Errorf("blame is not complete: %+v", b)
		}
		return per
	}
	var want []string
	for _, line := range strings.Split(git("blame", "--porcelain", "HEAD", "--", "src/app.go"), "\n") {
		if f := strings.Fields(line); (len(f) == 3 || len(f) == 4) && len(f[0]) == 40 {
			want = append(want, f[0])
		}
	}
	if got := blameLines(); !slices.Equal(got, want) {
		t.Errorf("blame src/app.go: %v\ngit blame: %v", got, want)
	}
	kept, err := objects.New(d.Moto.S3(), d.Bucket).List(context.Background(), wiring.BlamesPrefix+"acme/")
	if err != nil || len(kept) == 0 {
		t.Fatalf("no blame kept under %s: %v %v", wiring.BlamesPrefix, kept, err)
	}

	tag := "v1.0"
	var file struct{ File struct{ Content string } }
	call("read_file", `{"path":"src/app.go","ref":"`+tag+`"}`, &file)
	if want := git("show", tag+":src/app.go"); file.File.Content != want {
		t.Errorf("read_file at %s: %q, want %q", tag, file.File.Content, want)
	}
	var files struct{ Entries []struct{ Path string } }
	call("list_files", `{"ref":"feature","path":"src"}`, &files)
	var paths []string
	for _, e := range files.Entries {
		paths = append(paths, e.Path)
	}
	if !slices.Contains(paths, "src/app.go") || slices.Contains(paths, "src/server.go") {
		t.Errorf("list_files at feature (src/server.go renamed to src/app.go): %v", paths)
	}
	var grep struct{ Matches []struct{ File, Text string } }
	call("grep_codebase", `{"pattern":"server line 5","ref":"main~2"}`, &grep)
	if len(grep.Matches) != 1 || grep.Matches[0].File != "src/server.go" {
		t.Errorf("grep_codebase at main~2 (before the rename was merged): %+v", grep.Matches)
	}

	// The .env of the first commit is never shown, at any revision.
	first := strings.TrimSpace(git("rev-list", "--max-parents=0", "HEAD"))
	resp := invoke(t, d.Tool(t, "read_file"), directEvent("read_file", `{"path":".env","ref":"`+first+`"}`, "acme", "denied"))
	hasFields(t, string(resp.Payload), `{"ok":false,"error":{"code":"PATH_NOT_ALLOWED"}}`)

	// A fresh history function (a cold start elsewhere) blames the file
	// the same, from what the first one kept.
	fresh := d.Start(t, d.ToolConfig(t, history.BlameTool))
	resp = invoke(t, fresh, directEvent(history.BlameTool, `{"path":"src/app.go"}`, "acme", "fresh"))
	if !strings.Contains(string(resp.Payload), `"complete":true`) || !strings.Contains(string(resp.Payload), want[0]) {
		t.Errorf("a fresh function's blame: %s", resp.Payload)
	}
}
