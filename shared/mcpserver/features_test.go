package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// scopeRefusal is a filter's refusal of a token lacking the full scope.
func scopeRefusal(tool string) error {
	e := toolerr.New(toolerr.AccessDenied, "%s needs scope toolshed:full", tool).With("requiredScope", "toolshed:full")
	e.Challenge = `Bearer error="insufficient_scope", scope="toolshed:full"`
	return e
}

// readOnly lets through the read-only tools of the repository server, as
// a token with only the read scope does.
func readOnly(tool string) error {
	if slices.Contains([]string{"write_memory_entry", "add_task"}, tool) {
		return scopeRefusal(tool)
	}
	return nil
}

// TestFeatureRefusals: resources, prompts and completions are refused as
// the tools they call are: a credential that may not call read_file reads
// no file resource (403 with the challenge for a token lacking the scope,
// so that the client can ask for it; not found for a tool the client did
// not select), and prompts needing a tool the request may not call are
// neither listed nor got.
func TestFeatureRefusals(t *testing.T) {
	h := newRepoHandler(t)
	noScope := filtered(h, scopeRefusal)
	notSelected := filtered(h, func(tool string) error {
		if tool == "hello" {
			return nil
		}
		return toolerr.New(toolerr.ToolNotFound, "not selected")
	})
	readScope := filtered(h, readOnly)
	const readFile = `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"repo://default/src/index.ts"}}`
	const readMemory = `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"memory://decisions.jsonl"}}`
	const getExplain = `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"explain_file","arguments":{"path":"src/index.ts"}}}`
	const getRecord = `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"record_decision","arguments":{"decision":"x"}}}`
	const listPrompts = `{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`
	const listResources = `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`
	const listTemplates = `{"jsonrpc":"2.0","id":1,"method":"resources/templates/list"}`
	const completePath = `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"repo://{repo}/{+path}"},"argument":{"name":"path","value":"src/"}}}`
	tests := []struct {
		name       string
		h          http.Handler
		body       string
		status     int
		challenged bool
		want, not  string
	}{
		{"all: read a file", h, readFile, 200, false, `"uri":"repo://default/src/index.ts"`, `"error"`},
		{"all: complete a path", h, completePath, 200, false, `"src/server/"`, `"error"`},
		{"no scope: read a file", noScope, readFile, 403, true, `"code":"ACCESS_DENIED"`, `"result"`},
		{"no scope: read memory", noScope, readMemory, 403, true, `"code":"ACCESS_DENIED"`, `"result"`},
		{"no scope: get a prompt", noScope, getExplain, 403, true, `"requiredScope":"toolshed:full"`, `"result"`},
		{"no scope: list resources", noScope, listResources, 200, false, `"resources":[]`, `"error"`},
		{"no scope: list prompts", noScope, listPrompts, 200, false, `"prompts":[]`, `"error"`},
		{"read scope: read a file", readScope, readFile, 200, false, `"text":"import`, `"error"`},
		{"read scope: prompts without record_decision", readScope, listPrompts, 200, false, `"explain_file"`, `record_decision`},
		{"read scope: record_decision", readScope, getRecord, 403, true, `write_memory_entry needs scope toolshed:full`, `"result"`},
		{"not selected: read a file", notSelected, readFile, 200, false, `"code":"TOOL_NOT_FOUND"`, `"result"`},
		{"not selected: read memory", notSelected, readMemory, 200, false, `"code":"TOOL_NOT_FOUND"`, `"result"`},
		{"not selected: no template", notSelected, listTemplates, 200, false, `"resourceTemplates":[]`, `"error"`},
		{"not selected: no resources", notSelected, listResources, 200, false, `"resources":[]`, `"error"`},
		{"not selected: no prompts", notSelected, listPrompts, 200, false, `"prompts":[]`, `"error"`},
		{"not selected: get a prompt", notSelected, getExplain, 200, false, `unknown prompt`, `"result"`},
		{"not selected: complete a path", notSelected, completePath, 200, false, `no resource template`, `"result"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serveMCP(tt.h, tt.body)
			got := rec.Body.String()
			challenged := rec.Header().Get("WWW-Authenticate") != ""
			if rec.Code != tt.status || challenged != tt.challenged || !strings.Contains(got, tt.want) || strings.Contains(got, tt.not) {
				t.Errorf("got %d (challenge %v) %s\nwant %d (challenge %v) with %s, without %s", rec.Code, challenged, clipText(got), tt.status, tt.challenged, tt.want, tt.not)
			}
		})
	}
}

// TestCompletePaths: paths complete by prefix in their folder, then
// fuzzily in any case, best first; values are bounded.
func TestCompletePaths(t *testing.T) {
	h := newRepoHandler(t)
	tests := []struct {
		value string
		want  []string
	}{
		{"", []string{"CLAUDE.md", "README.md", "docs/", "package.json", "src/", "tsconfig.json"}},
		{"src/server/", []string{"src/server/auth/", "src/server/users/"}},
		{"src/ty", []string{"src/types.ts"}},
		{"userrepo", []string{"src/server/users/UserRepository.ts"}},
		{"AUTHsrv", []string{"src/server/auth/AuthService.ts"}},
		{"zzz", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"repo://{repo}/{+path}"},"argument":{"name":"path","value":` + quote(tt.value) + `}}}`
			var resp struct {
				Result struct {
					Completion struct{ Values []string }
				}
			}
			rec := serveMCP(h, body)
			if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
				t.Fatal(err)
			}
			if got := resp.Result.Completion.Values; !slices.Equal(got, tt.want) {
				t.Errorf("completion of %q = %q, want %q (%s)", tt.value, got, tt.want, clipText(rec.Body.String()))
			}
		})
	}
}

// TestCompleteLongNames: a path completes however long the typed name
// (list_files takes globs of at most 200 characters): to the files that
// hold what was typed, or to nothing, never to an error.
func TestCompleteLongNames(t *testing.T) {
	long := strings.Repeat("abcdefghij", 7) // 70 letters
	dir := repotest.WriteDir(t, map[string]string{"src/" + long + ".go": "package src\n", "src/" + long + "/x.go": "package x\n"})
	h := newRepoHandler(t, dir)
	tests := []struct {
		value string
		want  []string
	}{
		{long[:60], []string{"src/" + long + "/", "src/" + long + ".go"}},
		{strings.ToUpper(long[5:65]), []string{"src/" + long + "/", "src/" + long + ".go"}},
		{long[:59] + "z", []string{}},
		{strings.Repeat("é", 300), []string{}},
		{"src/" + long[:45] + "/" + long[:50], []string{}},
	}
	for _, tt := range tests {
		body := `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"repo://{repo}/{+path}"},"argument":{"name":"path","value":` + quote(tt.value) + `}}}`
		var resp struct {
			Result *struct {
				Completion struct{ Values []string }
			}
		}
		rec := serveMCP(h, body)
		if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.Result == nil {
			t.Errorf("completion of %d characters: %s", len(tt.value), clipText(rec.Body.String()))
			continue
		}
		if got := resp.Result.Completion.Values; !slices.Equal(got, tt.want) {
			t.Errorf("completion of %q = %q, want %q", tt.value, got, tt.want)
		}
	}
}

// TestPromptsTakeRepo: the prompts that read a repository read the one
// their repo argument names (default: the caller's default one, also
// named "default"), and their paths complete in it.
func TestPromptsTakeRepo(t *testing.T) {
	main := repotest.WriteDir(t, map[string]string{"lib/main.go": "package lib\n\n// zqxmain\n"})
	other := repotest.WriteDir(t, map[string]string{"lib/other.go": "package lib\n\n// zqxother\n"})
	h := newRepoHandler(t, "main="+main, "other="+other)
	get := func(name, args string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"` + name + `","arguments":` + args + `}}`
	}
	complete := func(prompt, arg, value, typed string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"` + prompt +
			`"},"argument":{"name":"` + arg + `","value":"` + value + `"},"context":{"arguments":` + typed + `}}}`
	}
	tests := []struct{ body, want, not string }{
		{get("explain_file", `{"path":"lib/other.go","repo":"other"}`), `"uri":"repo://other/lib/other.go"`, "zqxmain"},
		{get("explain_file", `{"path":"lib/main.go"}`), `"uri":"repo://default/lib/main.go"`, "zqxother"},
		{get("explain_file", `{"path":"lib/main.go","repo":"default"}`), `zqxmain`, "zqxother"},
		{get("explain_file", `{"path":"lib/main.go","repo":"other"}`), `"code":"RESOURCE_NOT_FOUND"`, `"result"`},
		{get("explain_file", `{"path":"lib/main.go","repo":"nope"}`), `No repository \"nope\"`, `"result"`},
		{get("explore_area", `{"path":"lib","repo":"other"}`), `lib/other.go`, "lib/main.go"},
		{get("explore_area", `{"path":"lib","repo":"other"}`), `\"repo\": \"other\"`, "lib/main.go"},
		{get("explore_area", `{"path":"lib"}`), `lib/main.go`, "lib/other.go"},
		{complete("explain_file", "path", "lib/", `{"repo":"other"}`), `"lib/other.go"`, "main"},
		{complete("explain_file", "path", "lib/", `{}`), `"lib/main.go"`, "other"},
		{complete("explore_area", "path", "li", `{"repo":"other"}`), `"lib"`, `"error"`},
		{complete("explore_area", "repo", "d", `{}`), `"values":["default"]`, `"error"`},
		{complete("explain_file", "path", "lib/", `{"repo":"nope"}`), `"values":[]`, `"error"`},
	}
	for _, tt := range tests {
		got := answer(h, tt.body)
		if !strings.Contains(got, tt.want) || strings.Contains(got, tt.not) {
			t.Errorf("%s:\n%s\nwant %s, without %s", tt.body, clipText(got), tt.want, tt.not)
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
