package localserver_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// pagedCall is a call of a list tool with more than one page of one
// entry, and a call of the same tool with other arguments ("" for a tool
// that takes none).
type pagedCall struct{ tool, args, other string }

var pagedCalls = []pagedCall{
	{"list_tasks", `{"limit":1}`, `{"limit":1,"status":"pending"}`},
	{"read_memory", `{"file":"decisions.jsonl","limit":1}`, `{"file":"best_practices.md","limit":1}`},
	{"list_files", `{"limit":1}`, `{"limit":1,"depth":2}`},
	{"find_symbols", `{"name":"Read","match":"prefix","limit":1}`, `{"name":"Read","match":"prefix","limit":1,"kinds":["function"]}`},
	{"find_references", `{"name":"Header","limit":1}`, `{"name":"Header","limit":1,"path":"net"}`},
	{"list_repos", `{"limit":1}`, ""},
}

// cursorServer is a local server over two repositories whose data
// directory holds the keys of two tenants, each with tasks and memory
// entries enough for two pages of every list tool.
type cursorServer struct {
	cfg        config.Config
	alice, bob string
}

func newCursorServer(t *testing.T) cursorServer {
	files := map[string]string{
		"net/header.go": "package net\n\n// Header is a header.\ntype Header struct{}\n\nfunc ReadHeader() Header { return Header{} }\n",
		"net/client.go": "package net\n\nfunc ReadResponse(h Header) {}\n\nfunc ReadRequest(h *Header) {}\n",
		"README.md":     "# Net\n",
	}
	dataDir := t.TempDir()
	db, err := boltstore.OpenIn(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	alice, _, err1 := auth.Create(ctx, db.Stores().APIKeys, "alice", "a", time.Now())
	bob, _, err2 := auth.Create(ctx, db.Stores().APIKeys, "bob", "b", time.Now())
	db.Close()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	cfg, err := config.FromEnv(func(k string) string {
		return map[string]string{"TOOLSHED_DATA_DIR": dataDir, "TOOLSHED_RATE_LIMITS": "list_tasks=10000,read_memory=10000,list_files=10000," +
			"find_symbols=10000,find_references=10000,list_repos=10000"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Repos = []string{"main=" + repotest.WriteDir(t, files), "other=" + repotest.WriteDir(t, files)}
	return cursorServer{cfg: cfg, alice: alice, bob: bob}
}

// fill gives each tenant tasks and memory entries for two pages.
func (s cursorServer) fill(t *testing.T, base string) {
	v1 := routes[0].call
	for _, key := range []string{s.alice, s.bob} {
		for _, c := range []struct{ tool, args string }{
			{"add_task", `{"title":"one"}`}, {"add_task", `{"title":"two"}`},
			{"write_memory_entry", `{"file":"decisions.jsonl","entry":{"timestamp":"2025-01-10T09:00:00Z","type":"decision","content":"one"}}`},
			{"write_memory_entry", `{"file":"decisions.jsonl","entry":{"timestamp":"2025-01-10T09:01:00Z","type":"decision","content":"two"}}`},
			{"write_memory_entry", `{"file":"best_practices.md","content":"- one\n"}`},
			{"write_memory_entry", `{"file":"best_practices.md","content":"- two\n"}`},
		} {
			if a := v1(t, base, key, c.tool, c.args); !a.ok {
				t.Fatalf("%s: %s", c.tool, a.body)
			}
		}
	}
}

// nextCursor returns the next_cursor of a call's answer on the /v1 route.
func nextCursor(t *testing.T, base, key, tool, args string) string {
	t.Helper()
	a := routes[0].call(t, base, key, tool, args)
	var b struct {
		Result struct {
			NextCursor *string `json:"next_cursor"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(a.body), &b); err != nil || !a.ok || b.Result.NextCursor == nil {
		t.Fatalf("%s %s: %s; want a page with a next one", tool, args, a.body)
	}
	return *b.Result.NextCursor
}

// withCursor returns the JSON args with the cursor c.
func withCursor(args, c string) string {
	return strings.TrimSuffix(args, "}") + `,"cursor":"` + c + `"}`
}

// unkeyed is a cursor as the tools made them before they were keyed:
// the base64url of "kind:position", which anyone could make.
func unkeyed(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// TestCursorsThroughTheServer: over HTTP, on /v1 and MCP, every list tool
// pages on with the cursor it issued and refuses, INVALID_INPUT naming
// cursor, one made up (offset MaxInt, 10^9), another tool's, one of a
// call with other arguments and another tenant's; and the cursors it
// issued still page on after the server restarts on its data directory.
func TestCursorsThroughTheServer(t *testing.T) {
	s := newCursorServer(t)
	base, stop := serveStoppable(t, s.cfg)
	s.fill(t, base)
	issued := map[string]string{}
	for _, c := range pagedCalls {
		issued[c.tool] = nextCursor(t, base, s.alice, c.tool, c.args)
	}
	for _, c := range pagedCalls {
		refused := map[string]string{
			"made up: MaxInt":  unkeyed(c.tool + ":9223372036854775807"),
			"made up: 10^9":    unkeyed(c.tool + ":1000000000"),
			"another tool's":   issued[map[bool]string{true: "find_references", false: "list_files"}[c.tool == "list_files"]],
			"another tenant's": nextCursor(t, base, s.bob, c.tool, c.args),
		}
		if c.other != "" {
			refused["another call's"] = nextCursor(t, base, s.alice, c.tool, c.other)
		}
		for _, r := range []route{routes[0], routes[2]} {
			if a := r.call(t, base, s.alice, c.tool, withCursor(c.args, issued[c.tool])); !a.ok {
				t.Errorf("%s on %s, its own cursor: %s", c.tool, r.name, a.body)
			}
			for what, cur := range refused {
				a := r.call(t, base, s.alice, c.tool, withCursor(c.args, cur))
				if a.ok || a.code != "INVALID_INPUT" || !strings.Contains(a.body, "cursor: was not issued for this call") {
					t.Errorf("%s on %s, %s: %s; want INVALID_INPUT naming cursor", c.tool, r.name, what, a.body)
				}
			}
		}
	}

	stop()
	base = serveConfig(t, s.cfg)
	for _, c := range pagedCalls {
		if a := routes[2].call(t, base, s.alice, c.tool, withCursor(c.args, issued[c.tool])); !a.ok {
			t.Errorf("%s after a restart, a cursor issued before: %s", c.tool, a.body)
		}
	}
}
