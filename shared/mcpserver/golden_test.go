package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/tools/txtar"

	"github.com/toolshed/toolshed/shared/mcpserver"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolkit"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the server's answers")

// goldenMaxBody is the body limit of the server under test, small so that
// the 413 exchange stays readable.
const goldenMaxBody = 2048

// rpc is a well-formed JSON-RPC request or notification, sent as each
// protocol version's client would send it: from 2026-07-28 on, params carry
// the per-request _meta (unless noMeta) and the headers mirror method and
// tool name.
type rpc struct {
	id     any // nil: a notification
	method string
	params map[string]any
	noMeta bool // leave out the _meta 2026-07-28 requires
}

// exchange is one golden case: a request and, in the golden files, the
// answer under each protocol version.
type exchange struct {
	name   string
	about  string // written at the top of each golden file
	verb   string // HTTP method; "" is POST
	header map[string]string
	call   *rpc   // the body, built per version, or
	body   string // a literal body (version independent)
	repo   bool   // served by the repository server (newRepoHandler), not hello's
	// precise is served by the navigation tools over precise indexes
	// (newPreciseHandler)
	precise bool
	// history is served by the repository server over a repository with
	// a git history (repotest.GitHistory)
	history bool
}

var exchanges = []exchange{
	// The happy path.
	{name: "initialize", about: "The legacy handshake; 2026-07-28 removed it.",
		call: &rpc{id: 1, method: "initialize", params: map[string]any{"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "golden", "version": "1"}}}},
	{name: "server-discover", about: "2026-07-28's replacement for initialize; earlier versions do not have it.",
		call: &rpc{id: 1, method: "server/discover"}},
	{name: "ping", about: "ping; 2026-07-28 removed it.", call: &rpc{id: "p-1", method: "ping"}},
	{name: "tools-list", about: "The served tools with their contract schemas.", call: &rpc{id: 2, method: "tools/list"}},
	{name: "tools-call-hello", about: "A successful call: structuredContent and one JSON text block.",
		call: &rpc{id: 3, method: "tools/call", params: map[string]any{"name": "hello", "arguments": map[string]any{"name": "World"}}}},
	{name: "tools-call-invalid-argument", about: "Invalid arguments are a tool error (isError), not a protocol error.",
		call: &rpc{id: 4, method: "tools/call", params: map[string]any{"name": "hello", "arguments": map[string]any{"name": 42}}}},
	{name: "tools-call-unknown-tool", about: "A tool that is not served: JSON-RPC -32602 with data.code TOOL_NOT_FOUND.",
		call: &rpc{id: 5, method: "tools/call", params: map[string]any{"name": "no-such-tool", "arguments": map[string]any{}}}},
	{name: "tools-call-bad-params", about: "tools/call whose arguments are not an object: invalid params.",
		call: &rpc{id: 6, method: "tools/call", params: map[string]any{"name": "hello", "arguments": "World"}}},
	{name: "tools-call-without-name", about: "tools/call that names no tool: invalid params.",
		call: &rpc{id: 15, method: "tools/call", params: map[string]any{"arguments": map[string]any{}}}},
	{name: "notification-initialized", about: "A notification the server accepts: 202, no body.",
		call: &rpc{method: "notifications/initialized"}},
	{name: "logging-set-level", about: "Accepted as a no-op where the version has it (no logging capability is advertised).",
		call: &rpc{id: 7, method: "logging/setLevel", params: map[string]any{"level": "debug"}}},
	{name: "logging-set-level-unknown-level", about: "A level outside the eight syslog levels.",
		call: &rpc{id: 8, method: "logging/setLevel", params: map[string]any{"level": "loud"}}},
	{name: "subscriptions-listen", about: "Nothing to stream: acknowledged with an empty filter and completed at once.",
		call: &rpc{id: 9, method: "subscriptions/listen", params: map[string]any{"notifications": map[string]any{"toolsListChanged": true}}}},
	{name: "subscriptions-listen-without-meta", about: "2026-07-28 requires _meta with protocolVersion and clientCapabilities on every request: -32602, 400.",
		call: &rpc{id: 16, method: "subscriptions/listen", params: map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, noMeta: true}},
	{name: "resources-subscribe", about: "Resource subscriptions are not advertised: a stateless server cannot deliver updates.",
		call: &rpc{id: 10, method: "resources/subscribe", params: map[string]any{"uri": "memory://decisions.jsonl"}}},
	{name: "prompts-list-without-tools", about: "Every prompt needs tools this server does not serve: none is listed.", call: &rpc{id: 10, method: "prompts/list"}},
	{name: "unknown-method", about: "A method no version has.", call: &rpc{id: 11, method: "tools/destroy"}},
	{name: "unknown-notification", about: "A notification the server does not know cannot be accepted: 400, id null.",
		call: &rpc{method: "notifications/whatever"}},
	{name: "request-without-id", about: "A request method sent as a notification.", call: &rpc{method: "tools/list"}},
	{name: "notification-with-id", about: "A notification method sent with an id.", call: &rpc{id: 12, method: "notifications/initialized"}},
	{name: "tools-call-without-params", about: "tools/call needs params.", call: &rpc{id: 13, method: "tools/call"}},

	// Resources, prompts and completions, on the repository server: tools
	// over the example project (shared/toolset/testdata/example-repo).
	{name: "resources-list", about: "The memory files and the repository's top-level files.", repo: true,
		call: &rpc{id: 20, method: "resources/list"}},
	{name: "resources-templates-list", about: "Every repository file through one template.", repo: true,
		call: &rpc{id: 21, method: "resources/templates/list"}},
	{name: "resources-read-file", about: "A repository file, read through read_file.", repo: true,
		call: &rpc{id: 22, method: "resources/read", params: map[string]any{"uri": "repo://default/src/index.ts"}}},
	{name: "resources-read-memory", about: "A memory file without entries: an empty text, sent as an empty blob.", repo: true,
		call: &rpc{id: 23, method: "resources/read", params: map[string]any{"uri": "memory://decisions.jsonl"}}},
	{name: "resources-read-denied", about: "A denied file answers read_file's refusal: PATH_NOT_ALLOWED, -32001.", repo: true,
		call: &rpc{id: 24, method: "resources/read", params: map[string]any{"uri": "repo://default/config/.env"}}},
	{name: "resources-read-missing", about: "A missing file: resource not found, -32602 (SEP-2164), with read_file's message.", repo: true,
		call: &rpc{id: 25, method: "resources/read", params: map[string]any{"uri": "repo://default/invalid/path.ts"}}},
	{name: "resources-read-folder", about: "A folder is not a resource: read_file's INVALID_INPUT, -32602.", repo: true,
		call: &rpc{id: 26, method: "resources/read", params: map[string]any{"uri": "repo://default/src"}}},
	{name: "resources-read-other-repository", about: "A repository the tenant does not have: resource not found.", repo: true,
		call: &rpc{id: 27, method: "resources/read", params: map[string]any{"uri": "repo://other/README.md"}}},
	{name: "resources-read-unknown-scheme", about: "A URI no template matches: resource not found.", repo: true,
		call: &rpc{id: 28, method: "resources/read", params: map[string]any{"uri": "test://nonexistent"}}},
	{name: "prompts-list", about: "The prompts, each with typed arguments that complete.", repo: true,
		call: &rpc{id: 30, method: "prompts/list"}},
	{name: "prompts-get-explain-file", about: "explain_file embeds the file (read_file with its dependencies) and lists what it imports.", repo: true,
		call: &rpc{id: 31, method: "prompts/get", params: map[string]any{"name": "explain_file", "arguments": map[string]any{"path": "src/server/auth/AuthService.ts"}}}},
	{name: "prompts-get-review-tasks", about: "review_tasks lists the tasks with list_tasks.", repo: true,
		call: &rpc{id: 32, method: "prompts/get", params: map[string]any{"name": "review_tasks"}}},
	{name: "prompts-get-missing-argument", about: "A required argument left out: -32602 naming it.", repo: true,
		call: &rpc{id: 33, method: "prompts/get", params: map[string]any{"name": "explain_file"}}},
	{name: "prompts-get-bad-choice", about: "A typed argument outside its choices: -32602.", repo: true,
		call: &rpc{id: 34, method: "prompts/get", params: map[string]any{"name": "record_decision", "arguments": map[string]any{"decision": "x", "type": "whim"}}}},
	{name: "prompts-get-unknown", about: "A prompt the server does not have: -32602.", repo: true,
		call: &rpc{id: 35, method: "prompts/get", params: map[string]any{"name": "no_such_prompt"}}},
	{name: "completion-path-prefix", about: "A path completes from its folder's entries; folders end in '/'.", repo: true,
		call: &rpc{id: 40, method: "completion/complete", params: map[string]any{
			"ref": map[string]any{"type": "ref/resource", "uri": "repo://{repo}/{+path}"}, "argument": map[string]any{"name": "path", "value": "src/server/a"}}}},
	{name: "completion-path-fuzzy", about: "Nothing starts so: the typed characters in order, anywhere.", repo: true,
		call: &rpc{id: 41, method: "completion/complete", params: map[string]any{
			"ref": map[string]any{"type": "ref/resource", "uri": "repo://{repo}/{+path}"}, "argument": map[string]any{"name": "path", "value": "tknmgr"}}}},
	{name: "completion-repo", about: "The tenant's repositories.", repo: true,
		call: &rpc{id: 42, method: "completion/complete", params: map[string]any{
			"ref": map[string]any{"type": "ref/resource", "uri": "repo://{repo}/{+path}"}, "argument": map[string]any{"name": "repo", "value": "d"}}}},
	{name: "completion-prompt-argument", about: "A prompt's typed argument completes to its choices.", repo: true,
		call: &rpc{id: 43, method: "completion/complete", params: map[string]any{
			"ref": map[string]any{"type": "ref/prompt", "name": "record_decision"}, "argument": map[string]any{"name": "type", "value": "p"}}}},
	{name: "completion-unknown-prompt", about: "A prompt the server does not have: -32602.", repo: true,
		call: &rpc{id: 44, method: "completion/complete", params: map[string]any{
			"ref": map[string]any{"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "argument": map[string]any{"name": "arg1", "value": "x"}}}},

	// The navigation tools over the example project's precise index
	// (scip-typescript's), one file of it changed since.
	{name: "find-definition", about: "A method's definition from a call, with its signature and symbol: precise.", precise: true,
		call: &rpc{id: 50, method: "tools/call", params: map[string]any{"name": "find_definition",
			"arguments": map[string]any{"path": "src/index.ts", "line": 4, "column": 18}}}},
	{name: "find-definition-changed-file", about: "A position in a file changed since indexing: answered by search, saying why.", precise: true,
		call: &rpc{id: 51, method: "tools/call", params: map[string]any{"name": "find_definition",
			"arguments": map[string]any{"path": "src/server/auth/TokenManager.ts", "line": 9, "column": 3}}}},
	{name: "find-references", about: "A class's references, its declaration included: precise, but its own file (changed since) searched by name.", precise: true,
		call: &rpc{id: 52, method: "tools/call", params: map[string]any{"name": "find_references",
			"arguments": map[string]any{"path": "src/server/auth/AuthService.ts", "line": 2, "column": 10, "includeDeclaration": true}}}},
	{name: "find-references-forged-cursor", about: "A cursor this server did not issue: INVALID_INPUT naming cursor.", precise: true,
		call: &rpc{id: 53, method: "tools/call", params: map[string]any{"name": "find_references",
			"arguments": map[string]any{"path": "src/index.ts", "line": 4, "column": 18, "cursor": "bm90LWEtY3Vyc29y"}}}},
	{name: "find-implementations", about: "What an interface extends is no implementation: both lists empty, precise.", precise: true,
		call: &rpc{id: 54, method: "tools/call", params: map[string]any{"name": "find_implementations",
			"arguments": map[string]any{"path": "src/server/auth/AuthService.ts", "line": 6, "column": 18}}}},
	{name: "find-callers", about: "Who calls a method: the top level of src/index.ts, with the call's line.", precise: true,
		call: &rpc{id: 55, method: "tools/call", params: map[string]any{"name": "find_callers",
			"arguments": map[string]any{"path": "src/server/auth/AuthService.ts", "line": 17, "column": 3}}}},
	{name: "find-callers-outgoing", about: "What a function calls: a library method, external (no place).", precise: true,
		call: &rpc{id: 56, method: "tools/call", params: map[string]any{"name": "find_callers",
			"arguments": map[string]any{"path": "src/server/auth/AuthService.ts", "line": 23, "column": 17, "direction": "outgoing"}}}},
	{name: "find-symbols-with-symbol", about: "A lookup's hit carries the SCIP symbol to pass on.", precise: true,
		call: &rpc{id: 57, method: "tools/call", params: map[string]any{"name": "find_symbols",
			"arguments": map[string]any{"name": "generateToken"}}}},

	// The history tools over a fixture history: a merge, a rename, a
	// binary file and a denied one.
	{name: "list-commits", about: "Commits touching a file, through its rename; the merge counts its first parent's diff.", history: true,
		call: &rpc{id: 60, method: "tools/call", params: map[string]any{"name": "list_commits",
			"arguments": map[string]any{"path": "src/app.go", "follow": true, "limit": 4}}}},
	{name: "get-commit", about: "A commit adding a binary file and deleting a denied one: binary says so, the denied file is only counted.", history: true,
		call: &rpc{id: 61, method: "tools/call", params: map[string]any{"name": "get_commit", "arguments": map[string]any{"commit": "main~3"}}}},
	{name: "blame", about: "A renamed file's lines at a tag, in hunks.", history: true,
		call: &rpc{id: 62, method: "tools/call", params: map[string]any{"name": "blame", "arguments": map[string]any{"path": "src/app.go", "ref": "v1.0"}}}},
	{name: "compare-unknown-revision", about: "An unknown revision: RESOURCE_NOT_FOUND naming it.", history: true,
		call: &rpc{id: 63, method: "tools/call", params: map[string]any{"name": "compare", "arguments": map[string]any{"base": "v0.9", "head": "main"}}}},
	{name: "compare-option-as-revision", about: "A revision that looks like an option: INVALID_INPUT.", history: true,
		call: &rpc{id: 64, method: "tools/call", params: map[string]any{"name": "compare", "arguments": map[string]any{"base": "--output=x", "head": "main"}}}},

	// HTTP-level refusals: httpapi's rules for every route, answered in the
	// /mcp route's JSON-RPC envelope.
	{name: "http-get", about: "GET opens no stream on a stateless server.", verb: http.MethodGet},
	{name: "http-delete", about: "There are no sessions to delete.", verb: http.MethodDelete},
	{name: "content-type-text", about: "The body must be sent as application/json.",
		header: map[string]string{"Content-Type": "text/plain"}, call: &rpc{id: 1, method: "tools/list"}},
	{name: "content-type-missing", header: map[string]string{"Content-Type": ""}, call: &rpc{id: 1, method: "tools/list"}},
	{name: "accept-json-only", about: "Clients must accept both JSON and SSE answers.",
		header: map[string]string{"Accept": "application/json"}, call: &rpc{id: 1, method: "tools/list"}},
	{name: "protocol-version-unsupported", about: "A version the server does not serve: -32022 with the supported list.",
		header: map[string]string{"Mcp-Protocol-Version": "2023-01-01"}, call: &rpc{id: 1, method: "tools/list"}},
	{name: "protocol-version-malformed", header: map[string]string{"Mcp-Protocol-Version": "latest"}, call: &rpc{id: 1, method: "tools/list"}},
	{name: "body-too-large", about: "Over the body limit: 413 with data.code SIZE_LIMIT_EXCEEDED.",
		body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"` + strings.Repeat("x", goldenMaxBody) + `"}}}`},
	{name: "last-event-id", about: "The SDK refuses Last-Event-ID on a POST in plain text; the answer is still JSON-RPC.",
		header: map[string]string{"Last-Event-ID": "0"}, call: &rpc{id: 14, method: "tools/list"}},

	// Bodies JSON-RPC 2.0 refuses.
	{name: "parse-error", body: `{"jsonrpc":"2.0","id":1,"method":`},
	{name: "empty-body", body: ``},
	{name: "invalid-utf8", body: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"x\":\"\xff\"}"},
	{name: "trailing-data", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}xyz`},
	{name: "two-messages", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
	{name: "duplicate-key", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}`},
	{name: "keys-differing-in-case", about: "The SDK reads keys exactly, encoding/json ignores case: refused, not read either way.",
		body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","METHOD":"tools/call"}`},
	{name: "params-keys-differing-in-case", about: "Which tool is called depends on the reader: invalid params.",
		call: &rpc{id: 17, method: "tools/call", params: map[string]any{"name": "hello", "NAME": "add_task", "arguments": map[string]any{"name": "x"}}}},
	{name: "duplicate-nested-key", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"a","name":"b"}}}`},
	{name: "batch", about: "Batches are refused in every version: one error.", body: `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`},
	{name: "not-an-object", body: `"tools/list"`},
	{name: "jsonrpc-1.0", body: `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`},
	{name: "jsonrpc-missing", body: `{"id":1,"method":"tools/list"}`},
	{name: "id-fraction", about: "1.5 must not be answered as 1.", body: `{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`},
	{name: "id-exponent", body: `{"jsonrpc":"2.0","id":1e3,"method":"tools/list"}`},
	{name: "id-2^64", about: "2^64 must not become negative.", body: `{"jsonrpc":"2.0","id":18446744073709551616,"method":"tools/list"}`},
	{name: "id-2^53", about: "The SDK carries ids as float64; 2^53 would be answered as a neighbour.", body: `{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"}`},
	{name: "id-largest", about: "The largest id accepted, echoed exactly.", call: &rpc{id: -9007199254740991, method: "tools/list"}},
	{name: "id-null", body: `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`},
	{name: "id-object", body: `{"jsonrpc":"2.0","id":{"n":1},"method":"tools/list"}`},
	{name: "id-without-method", about: "Neither a request nor a response.", body: `{"jsonrpc":"2.0","id":1}`},
	{name: "response-result", about: "This server sends no requests, so it accepts no responses: 400, id null.", body: `{"jsonrpc":"2.0","id":1,"result":{}}`},
	{name: "response-error", body: `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}`},
	{name: "method-and-result", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","result":{}}`},
	{name: "method-not-a-string", body: `{"jsonrpc":"2.0","id":1,"method":7}`},
	{name: "params-string", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":"x"}`},
	{name: "params-null", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}`},
	{name: "params-array", about: "Valid JSON-RPC, but MCP methods take named parameters.", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["hello"]}`},
}

// TestGolden runs every exchange under every protocol version the SDK
// serves and compares request and answer with
// testdata/golden/<version>/<name>.txtar. Run with -update to rewrite them.
func TestGolden(t *testing.T) {
	handlers := map[bool]http.Handler{false: newHandler(t), true: newRepoHandler(t)}
	preciseHandler := newPreciseHandler(t)
	historyHandler := newRepoHandler(t, repotest.GitHistory(t))
	versions := mcp.SupportedProtocolVersions()
	if len(versions) < 5 {
		t.Fatalf("the SDK serves %v; expected 2024-11-05 to 2026-07-28", versions)
	}
	want := map[string]bool{}
	for _, v := range versions {
		for _, ex := range exchanges {
			path := filepath.Join("testdata", "golden", v, ex.name+".txtar")
			want[path] = true
			t.Run(v+"/"+ex.name, func(t *testing.T) {
				h := handlers[ex.repo]
				switch {
				case ex.precise:
					h = preciseHandler
				case ex.history:
					h = historyHandler
				}
				got := record(t, h, ex, v)
				if *update {
					writeFile(t, path, got)
					return
				}
				golden, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if !bytes.Equal(got, golden) {
					t.Errorf("%s differs from the server's answer (run with -update to accept)\n got:\n%s\nwant:\n%s", path, got, golden)
				}
			})
		}
	}
	checkNoStaleFiles(t, want)
}

// newHandler serves hello from the real contracts behind httpapi, as the
// gateway does, with the same caller identity on every request.
func newHandler(t *testing.T) http.Handler {
	t.Helper()
	hc := as("golden", "req-golden")
	hc.MaxBody = goldenMaxBody
	return helloHandler(t, mcpserver.Config{Name: "toolshed", Version: "golden"}, toolkit.Options{}, hc)
}

// record sends ex under version v and renders the exchange as a txtar file.
func record(t *testing.T, h http.Handler, ex exchange, v string) []byte {
	t.Helper()
	body := ex.body
	if ex.call != nil {
		body = ex.call.encode(t, v)
	}
	req := buildRequest(ex, v, body)
	reqText := renderRequest(req, body)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(rec, req)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("no answer within 5 s")
	}
	about := ex.about
	if about != "" {
		about += "\n"
	}
	arc := &txtar.Archive{
		Comment: fmt.Appendf(nil, "%sProtocol version %s. Generated by TestGolden from its exchanges table; do not edit.\n", about, v),
		Files: []txtar.File{
			{Name: "request", Data: reqText},
			{Name: "response", Data: renderResponse(t, rec.Result())},
		},
	}
	return txtar.Format(arc)
}

// buildRequest makes the HTTP request of ex as a client of version v sends
// it.
func buildRequest(ex exchange, v, body string) *http.Request {
	verb := ex.verb
	if verb == "" {
		verb = http.MethodPost
	}
	var r io.Reader
	if verb == http.MethodPost {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(verb, "/mcp", r)
	req.Header.Set("Accept", "application/json, text/event-stream")
	if verb == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Mcp-Protocol-Version", v)
	if ex.call != nil && modern(v) {
		req.Header.Set("Mcp-Method", ex.call.method)
		switch ex.call.method {
		case "tools/call", "prompts/get":
			if name, ok := ex.call.params["name"].(string); ok {
				req.Header.Set("Mcp-Name", name)
			}
		case "resources/read":
			req.Header.Set("Mcp-Name", ex.call.params["uri"].(string))
		}
	}
	for k, val := range ex.header {
		if val == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, val)
	}
	return req
}

// modern reports whether v is the sessionless protocol of 2026-07-28 and
// later, whose requests carry _meta and mirror headers.
func modern(v string) bool { return v >= "2026-07-28" }

// encode renders c for version v, keys in the order clients send them.
func (c *rpc) encode(t *testing.T, v string) string {
	t.Helper()
	params := map[string]any{}
	for k, val := range c.params {
		params[k] = val
	}
	if c.method == "initialize" {
		params["protocolVersion"] = v
	}
	if modern(v) && c.id != nil && !c.noMeta {
		params["_meta"] = map[string]any{
			mcp.MetaKeyProtocolVersion:    v,
			mcp.MetaKeyClientInfo:         map[string]any{"name": "golden", "version": "1"},
			mcp.MetaKeyClientCapabilities: map[string]any{},
		}
	}
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0"`)
	if c.id != nil {
		fmt.Fprintf(&b, `,"id":%s`, mustJSON(t, c.id))
	}
	fmt.Fprintf(&b, `,"method":%s`, mustJSON(t, c.method))
	if len(params) > 0 {
		fmt.Fprintf(&b, `,"params":%s`, mustJSON(t, params))
	}
	b.WriteString("}")
	return b.String()
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// renderRequest writes the request line, the headers in sorted order and
// the body (abbreviated past 300 bytes; quoted if not UTF-8).
func renderRequest(req *http.Request, body string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s\n", req.Method, req.URL.Path)
	writeHeaders(&b, req.Header, nil)
	if body == "" || req.Method != http.MethodPost {
		return b.Bytes()
	}
	b.WriteString("\n")
	switch {
	case !utf8.ValidString(body):
		fmt.Fprintf(&b, "(not UTF-8) %q\n", body)
	case len(body) > 300:
		fmt.Fprintf(&b, "%s... (%d bytes)\n", body[:120], len(body))
	default:
		b.WriteString(body + "\n")
	}
	return b.Bytes()
}

// shownHeaders are the answer headers the golden files record.
var shownHeaders = []string{"Allow", "Content-Type", "Mcp-Session-Id"}

// renderResponse writes the status, the shown headers and the body: JSON
// re-indented with sorted keys; anything else (SSE) as sent.
func renderResponse(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d %s\n", resp.StatusCode, http.StatusText(resp.StatusCode))
	writeHeaders(&b, resp.Header, shownHeaders)
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(body) == 0 {
		return b.Bytes()
	}
	b.WriteString("\n")
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		b.Write(normalizeJSON(t, body))
		return b.Bytes()
	}
	b.Write(body)
	return b.Bytes()
}

func writeHeaders(b *bytes.Buffer, h http.Header, only []string) {
	keys := make([]string, 0, len(h))
	for k := range h {
		if only == nil || slices.Contains(only, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "%s: %s\n", k, strings.Join(h[k], ", "))
	}
}

// normalizeJSON re-indents a JSON body with sorted keys, numbers as sent.
func normalizeJSON(t *testing.T, body []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("answer declared as JSON is not: %v\n%s", err, body)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkNoStaleFiles fails on golden files no exchange produces (with
// -update, removes them), so renamed cases leave nothing behind.
func checkNoStaleFiles(t *testing.T, want map[string]bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if want[f] {
			continue
		}
		if *update {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s: no exchange produces this file (run with -update to remove it)", f)
	}
}
