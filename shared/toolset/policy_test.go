package toolset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/contextsearch"
	"github.com/toolshed/toolshed/shared/tools/grep"
	"github.com/toolshed/toolshed/shared/tools/repofiles"
	"github.com/toolshed/toolshed/shared/wiring"
)

// secrets are files no repository tool may read, search or index, each
// holding a word found nowhere else (the deployment denies *.sqlite).
var secrets = map[string]string{
	".env":                  "API_KEY=zqxenv",
	"config/server.pem":     "-----BEGIN PRIVATE KEY----- zqxpem",
	"secrets.json":          `{"token": "zqxjson"}`,
	"docs/secrets.yaml":     "password: zqxyaml",
	"deploy/id.key":         "zqxkey",
	"src/secrets.ts":        "export const token = 'zqxts';",
	"docs/.git/config":      "[remote] url = zqxgit",
	"data/cache.sqlite.txt": "not denied: zqxfine",
	"data/app.sqlite":       "denied by the deployment: zqxsqlite",
}

// public files: the tools work, and import the secrets.
var public = map[string]string{
	"README.md":    "# Project\n\nzqxpublic readme\n",
	"docs/use.md":  "# Use\n\nzqxpublic docs\n",
	"src/app.ts":   "import { token } from './secrets';\nimport cfg from '../config/server.pem';\n\n// zqxpublic app\nexport function app() { return token; }\n",
	"src/login.go": "package src\n\n// Login is zqxpublic.\nfunc Login() {}\n",
}

// TestSecretsRefusedByEveryRepositoryTool: on the local directory and on
// its S3 snapshot alike, read_repo_file and read_file refuse every secret
// with PATH_NOT_ALLOWED and a sentence, read_file's dependencies leave
// them out, and grep_codebase and context_search never find their words.
func TestSecretsRefusedByEveryRepositoryTool(t *testing.T) {
	files := map[string]string{}
	for p, c := range secrets {
		files[p] = c + "\n"
	}
	for p, c := range public {
		files[p] = c
	}
	dir := repotest.WriteDir(t, files)
	deny, err := repo.ParseDeny([]string{"*.sqlite"})
	if err != nil {
		t.Fatal(err)
	}
	policy, err := repo.NewPolicy(deny, "")
	if err != nil {
		t.Fatal(err)
	}
	s3 := repotest.StartS3(t)
	st := tooltest.BoltStores(t)

	// Local: one live view, context_search indexing it in process.
	local, err := repo.NewLocal(dir, repo.LocalOptions{Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	localSrc := repo.Shared{View: local}
	localSearch := contextsearch.New(contextsearch.Options{Memory: st.Memory, Blobs: &indexfile.MemBlobs{}, Mode: wiring.CodeIndexLive, Repo: localSrc})
	t.Cleanup(localSearch.Close)
	localSearch.Start(context.Background(), "alice")
	localSearch.Settle()

	// S3: the snapshot holds every file (packed as is, not through
	// `snapshot push`, which would leave the secrets out), read through
	// views that apply the policy; the indexer builds the code index.
	s3.Publish(t, "alice", "c1", dir)
	s3Src := s3.Source(repo.S3Options{Policy: policy})
	blobs := &indexfile.S3Blobs{Bucket: s3.Objects(), Prefix: indexfile.BucketPrefix}
	ix := &indexer.Indexer{Store: indexfile.NewStore(blobs), Snapshots: &indexer.Snapshots{Bucket: s3.Objects(), Policy: policy, MaxBytes: repo.DefaultMaxBytes},
		Now: tooltest.NewClock().Now, Log: slog.New(slog.DiscardHandler)}
	if err := ix.IndexSnapshot(context.Background(), "alice"); err != nil {
		t.Fatal(err)
	}
	s3Search := contextsearch.New(contextsearch.Options{Memory: st.Memory, Blobs: blobs})

	for _, src := range []struct {
		name   string
		source repo.Source
		search *contextsearch.Service
	}{{"local", localSrc, localSearch}, {"s3", s3Src, s3Search}} {
		t.Run(src.name, func(t *testing.T) {
			h := tooltest.New(t, st, append(append(grep.Tools(src.source, githistory.Revisions{}),
				repofiles.Tools(src.source, githistory.Revisions{}, st.Memory, st.Access, nil)...), contextsearch.Tools(src.search)...))
			checkSecrets(t, h, st)
		})
	}
}

var secretWord = regexp.MustCompile(`zqx[a-z]+`)

func checkSecrets(t *testing.T, h *tooltest.Harness, st store.Stores) {
	for p, content := range secrets {
		word := secretWord.FindString(content)
		allowed := word == "zqxfine"
		for _, tool := range []string{repofiles.ReadFileTool, repofiles.ReadRepoFileTool} {
			o := h.Call("alice", tool, fmt.Sprintf(`{"path":%q}`, p))
			switch {
			case allowed && tool == repofiles.ReadFileTool:
				if !o.OK {
					t.Errorf("%s %s: %+v, want it read (not denied)", tool, p, o.Error)
				}
			case allowed:
			case o.OK || o.Error.Code != toolerr.PathNotAllowed:
				t.Errorf("%s %s: %s %+v, want PATH_NOT_ALLOWED", tool, p, o.Result, o.Error)
			case tool == repofiles.ReadFileTool && !strings.Contains(o.Error.Message, "is not readable: "):
				t.Errorf("%s %s: %q does not say why in words", tool, p, o.Error.Message)
			}
		}
		found := matches(t, h, word)
		if allowed != (found > 0) {
			t.Errorf("grep_codebase %s (in %s): %d matches", word, p, found)
		}
		if hits := contextHits(t, h, word); allowed != strings.Contains(hits, word) {
			t.Errorf("context_search %s (in %s): %s", word, p, hits)
		}
	}
	if n := matches(t, h, "zqxpublic"); n != 4 {
		t.Errorf("grep_codebase zqxpublic: %d matches, want one per public file", n)
	}
	if hits := contextHits(t, h, "zqxpublic login"); !strings.Contains(hits, "src/login.go") {
		t.Errorf("context_search does not find the public code: %s", hits)
	}
	// read_file's dependencies name the secrets it imports, never with
	// their content.
	var out struct {
		Dependencies []struct {
			Path    string  `json:"path"`
			Content *string `json:"content"`
			Note    string  `json:"note"`
		} `json:"dependencies"`
	}
	h.OK(t, "alice", repofiles.ReadFileTool, `{"path":"src/app.ts","includeDeps":true,"maxDepth":1}`, &out)
	for _, d := range out.Dependencies {
		if d.Content != nil && strings.Contains(*d.Content, "zqx") {
			t.Errorf("read_file's dependency %s holds a secret: %q", d.Path, *d.Content)
		}
	}
	if len(out.Dependencies) == 0 {
		t.Errorf("src/app.ts: no dependencies listed")
	}
}

// matches is grep_codebase's count of lines holding word.
func matches(t *testing.T, h *tooltest.Harness, word string) int {
	t.Helper()
	var out struct {
		TotalMatches int `json:"totalMatches"`
	}
	h.OK(t, "alice", grep.Tool, fmt.Sprintf(`{"pattern":%q,"limit":100}`, word), &out)
	return out.TotalMatches
}

// contextHits is context_search's answer for query, as text.
func contextHits(t *testing.T, h *tooltest.Harness, query string) string {
	t.Helper()
	o := h.Call("alice", contextsearch.Tool, fmt.Sprintf(`{"query":%q,"limit":20}`, query))
	if !o.OK {
		if o.Error.Code == toolerr.ResourceNotFound {
			return ""
		}
		t.Fatalf("context_search %s: %+v", query, o.Error)
	}
	var out struct {
		Results []json.RawMessage `json:"results"`
	}
	json.Unmarshal(o.Result, &out)
	var b strings.Builder
	for _, r := range out.Results {
		b.Write(r)
	}
	return b.String()
}
