package localserver_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/fakesecret"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestSecretsAreNeverServed: in a repository of Go code with secrets
// planted by name (id_rsa, .aws/credentials, .netrc) and by content (a
// private key block in notes.txt, in a page of docs/, in a Go file and at
// the end of a large log),
// no tool, resource, completion or prompt of the local server shows one:
// reading one, whole or a range, answers PATH_NOT_ALLOWED naming the
// rule, and no search, listing, index or completion holds it, while the
// code around them is served as ever.
func TestSecretsAreNeverServed(t *testing.T) {
	key := fakesecret.PrivateKey()
	s := planted{
		keyLine: strings.Split(key, "\n")[1],
		rules: map[string]string{
			"id_rsa":           "ssh-private-key",
			".aws/credentials": "aws-credentials",
			".netrc":           "netrc",
			"notes.txt":        "private-key",
			"docs/deploy.md":   "private-key",
			"keys/keys.go":     "private-key",
			"logs/deploy.log":  "private-key",
		},
	}
	dir := repotest.GoPackages(t, "container/list")
	for name, content := range map[string]string{
		"README.md":        "# Lists\n\nSee container/list.\n",
		"id_rsa":           key,
		".aws/credentials": "[default]\naws_secret_access_key = zqxsecret\n",
		".netrc":           "machine example.com login me password zqxsecret\n",
		"notes.txt":        "zqxsecret deploy notes\n\n" + key,
		"docs/deploy.md":   "# Deploy zqxsecret\n\n" + key,
		"keys/keys.go":     "package keys\n\n// Sign signs with zqxsecret.\nfunc Sign() {}\n\nvar key = `" + key + "`\n",
		// The key after 500 KB: far past the lines a range asks for, and
		// past what the view's check holds back before passing bytes on.
		"logs/deploy.log": "zqxsecret\n" + strings.Repeat("deploy step done\n", 30_000) + key,
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	base := startServer(t, map[string]string{"TOOLSHED_REPO_DIR": dir, "TOOLSHED_RATE_LIMITS": "grep_codebase=10000,context_search=10000,read_file=10000,list_files=10000,find_symbols=10000,find_references=10000"})
	waitReady(t, base, "context_search", `{"query":"list element"}`)
	waitReady(t, base, "find_symbols", `{"name":"PushFront"}`)
	t.Run("tools", func(t *testing.T) { testToolsHideSecrets(t, base, s) })
	t.Run("mcp", func(t *testing.T) { testMCPHidesSecrets(t, base, s) })
}

// planted are the secrets TestSecretsAreNeverServed planted: a line of
// the private key's base64, and the planted files with the rule that
// refuses each. Every planted file holds the key or the word zqxsecret.
type planted struct {
	keyLine string
	rules   map[string]string // path → rule
}

// leak returns what of a secret body shows: the key, the word zqxsecret,
// or (with names) a planted file's path; "" for nothing.
func (s planted) leak(body string, names bool) string {
	for _, x := range []string{"zqxsecret", s.keyLine, "PRIVATE KEY"} {
		if strings.Contains(body, x) {
			return x
		}
	}
	for p := range s.rules {
		if names && strings.Contains(body, p) {
			return p
		}
	}
	return ""
}

// testToolsHideSecrets: reading a planted file is refused, naming the
// rule; searches, listings and indexes hold none, and still serve the
// code.
func testToolsHideSecrets(t *testing.T, base string, s planted) {
	v1 := routes[0].call
	for p, rule := range s.rules {
		// A range before the key (notes.txt holds it from line 3) is
		// refused as the whole file is.
		for _, c := range []struct{ tool, args string }{
			{"read_file", fmt.Sprintf(`{"path":%q}`, p)},
			{"read_file", fmt.Sprintf(`{"path":%q,"startLine":1,"endLine":1}`, p)},
			{"read_repo_file", fmt.Sprintf(`{"path":%q}`, p)},
		} {
			a := v1(t, base, "", c.tool, c.args)
			if a.ok || a.code != "PATH_NOT_ALLOWED" || s.leak(a.body, false) != "" {
				t.Errorf("%s %s: %s", c.tool, c.args, a.body)
			}
			// read_repo_file refuses most by its allow list first.
			if (c.tool == "read_file" || p == "docs/deploy.md") && !strings.Contains(a.body, "rule "+rule) {
				t.Errorf("%s %s: the refusal does not name rule %s: %s", c.tool, c.args, rule, a.body)
			}
		}
	}
	for _, c := range []struct{ tool, args, want string }{
		{"grep_codebase", `{"pattern":"zqx.ecret|PRIVATE.KEY|Sign","limit":100}`, `"totalMatches":0`},
		{"grep_codebase", `{"pattern":"PushFront"}`, "container/list/list.go"},
		{"list_files", `{"depth":10,"limit":1000}`, "container/list/list.go"},
		{"list_files", `{"patterns":["**/*"],"limit":1000}`, "README.md"},
		{"find_symbols", `{"name":"Sign"}`, `"total":0`},
		{"find_symbols", `{"name":"PushFront"}`, "container/list/list.go"},
		{"find_references", `{"name":"Sign"}`, `"totalLines":0`},
		{"find_references", `{"name":"PushFront"}`, "container/list/list.go"},
		{"context_search", `{"query":"deploy notes: sign with the key, then push the element to the list","limit":20}`, "container/list"},
	} {
		a := v1(t, base, "", c.tool, c.args)
		if !a.ok || !strings.Contains(a.body, c.want) || s.leak(a.body, true) != "" {
			t.Errorf("%s %s: want %s and no secret (shows %q): %.600s", c.tool, c.args, c.want, s.leak(a.body, true), a.body)
		}
	}
	if a := v1(t, base, "", "find_symbols", `{"file":"keys/keys.go"}`); a.ok || a.code != "PATH_NOT_ALLOWED" || s.leak(a.body, false) != "" {
		t.Errorf("find_symbols of keys/keys.go: %s", a.body)
	}
}

// testMCPHidesSecrets: no resource, completion or prompt shows a planted
// file; reading one as a resource, or explaining it, is refused.
func testMCPHidesSecrets(t *testing.T, base string, s planted) {
	rpc := func(method, params string) string {
		_, body := mcpPost(t, base+"/mcp", nil, `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`)
		return string(body)
	}
	complete := func(value string) string {
		return rpc("completion/complete", `{"ref":{"type":"ref/resource","uri":"repo://{repo}/{+path}"},"argument":{"name":"path","value":`+quoteJSON(value)+`}}`)
	}
	for _, c := range []struct{ name, body, want string }{
		{"resources/list", rpc("resources/list", `{}`), "repo://default/README.md"},
		{"complete the root", complete(""), `"container/"`},
		{"complete n", complete("n"), `"values":[`},
		{"complete id", complete("id"), `"values":[`},
		{"complete keys/", complete("keys/"), `"values":[`},
		{"complete docs/", complete("docs/"), `"values":[`},
		{"explore the root", rpc("prompts/get", `{"name":"explore_area","arguments":{"path":""}}`), "container"},
		{"explore keys", rpc("prompts/get", `{"name":"explore_area","arguments":{"path":"keys"}}`), `"jsonrpc"`},
	} {
		if !strings.Contains(c.body, c.want) || s.leak(c.body, true) != "" {
			t.Errorf("%s: want %s and no secret (shows %q): %.600s", c.name, c.want, s.leak(c.body, true), c.body)
		}
	}
	for p := range s.rules {
		for _, body := range []string{
			rpc("resources/read", `{"uri":"repo://default/`+p+`"}`),
			rpc("prompts/get", `{"name":"explain_file","arguments":{"path":`+quoteJSON(p)+`}}`),
		} {
			if !strings.Contains(body, `"error"`) || !strings.Contains(body, "not readable") || s.leak(body, false) != "" {
				t.Errorf("%s: %.600s", p, body)
			}
		}
	}
}

// waitReady calls tool until its index is ready (context_search's code
// index, find_symbols' symbol table).
func waitReady(t *testing.T, base, tool, args string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		a := routes[0].call(t, base, "", tool, args)
		var out struct {
			Result struct {
				Index struct{ State string } `json:"index"`
			} `json:"result"`
		}
		if a.ok && json.Unmarshal([]byte(a.body), &out) == nil && out.Result.Index.State == "ready" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the index is not ready after a minute: %s", tool, a.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// quoteJSON is s as a JSON string.
func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
