package localserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// route is one of the three ways to call a tool over HTTP.
type route struct {
	name string
	call func(t *testing.T, base, key, tool, args string) answer
}

// answer is a tool's answer on any route: ok, the canonical error code
// (the task-API envelope's on /mcp/tool) and the whole body.
type answer struct {
	ok   bool
	code string
	body string
}

func post(t *testing.T, url, key, body string) []byte {
	t.Helper()
	authorization := ""
	if key != "" {
		authorization = "Bearer " + key
	}
	var raw json.RawMessage
	if err := json.Unmarshal([]byte(postAuth(t, url, authorization, body).body), &raw); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return raw
}

var routes = []route{
	{"v1", func(t *testing.T, base, key, tool, args string) answer {
		raw := post(t, base+"/v1/tools/"+tool, key, `{"args":`+args+`}`)
		var b struct {
			OK   bool   `json:"ok"`
			Code string `json:"code"`
		}
		json.Unmarshal(raw, &b)
		return answer{b.OK, b.Code, string(raw)}
	}},
	{"mcp/tool", func(t *testing.T, base, key, tool, args string) answer {
		raw := post(t, base+"/mcp/tool/"+tool, key, args)
		var b struct {
			Success bool   `json:"success"`
			Code    string `json:"code"`
		}
		json.Unmarshal(raw, &b)
		return answer{b.Success, b.Code, string(raw)}
	}},
	{"mcp", func(t *testing.T, base, key, tool, args string) answer {
		raw := post(t, base+"/mcp", key, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tool, args))
		var b struct {
			Result struct {
				IsError bool `json:"isError"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		json.Unmarshal(raw, &b)
		a := answer{ok: !b.Result.IsError, body: string(raw)}
		if a.ok == false && len(b.Result.Content) > 0 {
			var e struct {
				Code string `json:"code"`
			}
			json.Unmarshal([]byte(b.Result.Content[0].Text), &e)
			a.code = e.Code
		}
		return a
	}},
}

// TestTenantIsolationWithDataInsideTheRepository: the data directory lies
// inside the served repository (as with `make run` in a checkout, hidden
// or not): no repository tool, on any route, shows one tenant another's
// file-io files, tasks, memory or the store file, and each tenant keeps
// its own.
func TestTenantIsolationWithDataInsideTheRepository(t *testing.T) {
	for _, dataName := range []string{".toolshed", "server-data"} {
		t.Run(dataName, func(t *testing.T) {
			repoDir := repotest.WriteDir(t, map[string]string{
				"README.md":  "# Project\n",
				"src/app.go": "package app\n\n// Serve starts the app.\nfunc Serve() {}\n",
			})
			dataDir := filepath.Join(repoDir, dataName)
			if err := os.MkdirAll(dataDir, 0o700); err != nil {
				t.Fatal(err)
			}
			db, err := boltstore.OpenIn(dataDir)
			if err != nil {
				t.Fatal(err)
			}
			alice, _, _ := auth.Create(context.Background(), db.Stores().APIKeys, "alice", "a", time.Now())
			bob, _, _ := auth.Create(context.Background(), db.Stores().APIKeys, "bob", "b", time.Now())
			db.Close()
			base := startServer(t, map[string]string{"TOOLSHED_DATA_DIR": dataDir, "TOOLSHED_REPO_DIR": repoDir,
				"TOOLSHED_RATE_LIMITS": "grep_codebase=10000,context_search=10000,read_file=10000,read_repo_file=10000"})
			v1 := routes[0].call

			// Bob's data, each holding a word found nowhere else.
			for _, c := range []struct{ tool, args string }{
				{"file-io", `{"command":"write_file","path":"diary.txt","content":"dear diary, zqxdiary"}`},
				{"add_task", `{"title":"zqxtask plan"}`},
				{"write_memory_entry", `{"file":"decisions.jsonl","entry":{"timestamp":"2025-01-10T09:00:00Z","type":"decision","content":"zqxmemory choice"}}`},
				{"read_file", `{"path":"src/app.go"}`},
			} {
				if a := v1(t, base, bob, c.tool, c.args); !a.ok {
					t.Fatalf("bob's %s: %s", c.tool, a.body)
				}
			}
			// A file of the repository with the same word, so that a
			// search that finds nothing has seen the tree's latest state.
			os.WriteFile(filepath.Join(repoDir, "notes.md"), []byte("zqxdiary in the open\n"), 0o644)
			waitGrep(t, base, alice, "zqxdiary", 1)

			inside := []string{dataName + "/workspace/bob/diary.txt", dataName + "/" + boltstore.File, dataName + "/cursor.key", dataName + "/workspace", dataName}
			for _, r := range routes {
				t.Run(r.name, func(t *testing.T) {
					denied := "PATH_NOT_ALLOWED"
					if r.name == "mcp/tool" {
						denied = "ACCESS_DENIED" // the task-API envelope's name
					}
					for _, p := range inside {
						for _, tool := range []string{"read_file", "read_repo_file"} {
							a := r.call(t, base, alice, tool, fmt.Sprintf(`{"path":%q}`, p))
							if a.ok || a.code != denied || strings.Contains(a.body, "zqxdiary") {
								t.Errorf("%s %s: %s", tool, p, a.body)
							}
						}
					}
					for _, word := range []string{"zqxdiary", "zqxtask", "zqxmemory"} {
						a := r.call(t, base, alice, "grep_codebase", fmt.Sprintf(`{"pattern":%q,"limit":100}`, word))
						if !a.ok || strings.Contains(a.body, dataName+"/") {
							t.Errorf("grep %s: %s", word, a.body)
						}
						// The query is echoed; bob's texts are not found.
						if a := r.call(t, base, alice, "context_search", fmt.Sprintf(`{"query":"%s"}`, word)); strings.Contains(a.body, dataName+"/") ||
							strings.Contains(a.body, "zqxtask plan") || strings.Contains(a.body, "zqxmemory choice") || strings.Contains(a.body, "dear diary") {
							t.Errorf("context_search %s: %s", word, a.body)
						}
					}
					if a := r.call(t, base, alice, "grep_codebase", `{"pattern":"toolshed|bbolt|diary","filePattern":"`+dataName+`/**"}`); !a.ok || !strings.Contains(a.body, `"totalMatches":0`) {
						t.Errorf("grep in the data directory: %s", a.body)
					}
					if a := r.call(t, base, alice, "file-io", `{"command":"read_file","path":"diary.txt"}`); a.ok || strings.Contains(a.body, "zqxdiary") {
						t.Errorf("alice reads bob's diary: %s", a.body)
					}
					if a := r.call(t, base, alice, "list_tasks", `{}`); !a.ok || strings.Contains(a.body, "zqxtask") {
						t.Errorf("alice lists bob's tasks: %s", a.body)
					}
					if a := r.call(t, base, alice, "read_memory", `{"file":"decisions.jsonl"}`); !a.ok || strings.Contains(a.body, "zqxmemory") {
						t.Errorf("alice reads bob's memory: %s", a.body)
					}
				})
			}
			// Bob still has all of it.
			if a := v1(t, base, bob, "file-io", `{"command":"read_file","path":"diary.txt"}`); !a.ok || !strings.Contains(a.body, "zqxdiary") {
				t.Errorf("bob's diary: %s", a.body)
			}
			if a := v1(t, base, bob, "context_search", `{"query":"zqxmemory choice"}`); !a.ok || !strings.Contains(a.body, "zqxmemory") {
				t.Errorf("bob's memory in context_search: %s", a.body)
			}
		})
	}
}

// waitGrep waits up to the promised 2 s for grep_codebase to count want
// matches of pattern.
func waitGrep(t *testing.T, base, key, pattern string, want int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		a := routes[0].call(t, base, key, "grep_codebase", fmt.Sprintf(`{"pattern":%q,"limit":100}`, pattern))
		if strings.Contains(a.body, fmt.Sprintf(`"totalMatches":%d,`, want)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("grep %s: not %d matches within 2 s: %s", pattern, want, a.body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRepositoryToolsSeeChangesAtOnce: on the local server, a new
// untracked file, an edit, a rename, a delete and a burst of 1,000 new
// files are seen by every repository tool within 2 s, without a commit.
func TestRepositoryToolsSeeChangesAtOnce(t *testing.T) {
	repoDir := repotest.WriteDir(t, map[string]string{"README.md": "# Project\n"})
	base := startServer(t, map[string]string{"TOOLSHED_REPO_DIR": repoDir,
		"TOOLSHED_RATE_LIMITS": "grep_codebase=10000,context_search=10000,read_file=10000,read_repo_file=10000"})
	call := func(tool, args string) answer { return routes[0].call(t, base, "", tool, args) }
	seen := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not seen within 2 s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	everywhere := func(path, word string) func() bool {
		return func() bool {
			return strings.Contains(call("grep_codebase", `{"pattern":"`+word+`"}`).body, `"file":"`+path+`"`) &&
				strings.Contains(call("read_file", `{"path":"`+path+`"}`).body, word) &&
				strings.Contains(call("read_repo_file", `{"path":"`+path+`"}`).body, word) &&
				strings.Contains(call("context_search", `{"query":"`+word+` notes"}`).body, `"id":"`+path+`:`)
		}
	}
	write := func(p, content string) {
		if err := os.WriteFile(filepath.Join(repoDir, filepath.FromSlash(p)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(repoDir, "docs"), 0o755)
	write("docs/new.md", "# Notes\n\nzqxone notes\n")
	seen("a new untracked file", everywhere("docs/new.md", "zqxone"))
	write("docs/new.md", "# Notes\n\nzqxtwo notes\n")
	seen("an edit", everywhere("docs/new.md", "zqxtwo"))
	if a := call("grep_codebase", `{"pattern":"zqxone"}`); !strings.Contains(a.body, `"totalMatches":0`) {
		t.Errorf("the edited text is still found: %s", a.body)
	}
	os.Rename(filepath.Join(repoDir, "docs/new.md"), filepath.Join(repoDir, "docs/renamed.md"))
	seen("a rename", everywhere("docs/renamed.md", "zqxtwo"))
	if a := call("read_file", `{"path":"docs/new.md"}`); a.ok || a.code != "RESOURCE_NOT_FOUND" {
		t.Errorf("the old name: %s", a.body)
	}
	os.Remove(filepath.Join(repoDir, "docs/renamed.md"))
	seen("a delete", func() bool {
		return strings.Contains(call("grep_codebase", `{"pattern":"zqxtwo"}`).body, `"totalMatches":0`) &&
			!strings.Contains(call("context_search", `{"query":"zqxtwo notes"}`).body, "docs/renamed.md")
	})
	os.Mkdir(filepath.Join(repoDir, "burst"), 0o755)
	for i := range 1000 {
		write(fmt.Sprintf("burst/f%04d.txt", i), fmt.Sprintf("zqxburst %d\n", i))
	}
	seen("a burst of 1,000 new files", func() bool {
		return strings.Contains(call("grep_codebase", `{"pattern":"zqxburst"}`).body, `"totalMatches":1000,`)
	})
}
