package toolset_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolset"
	"github.com/toolshed/toolshed/shared/wiring"
)

// TestFamilies checks the registry: every tool has a contract under its
// canonical name and belongs to one family, every grant is well formed and
// every family builds exactly the tools it names.
func TestFamilies(t *testing.T) {
	set, err := schema.Load(contracts.FS)
	if err != nil {
		t.Fatal(err)
	}
	stores := tooltest.BoltStores(t)
	env := wiring.NewEnv(config.Config{}, nil).UseStores(stores, nil)

	seen := map[string]string{}
	for _, f := range toolset.Families {
		t.Run(f.Name, func(t *testing.T) {
			if f.Name == "" || len(f.Tools) == 0 || f.New == nil {
				t.Fatalf("family %+v needs a name, tools and a constructor", f)
			}
			for _, tool := range f.Tools {
				c, ok := set.Get(tool)
				if !ok || c.Name != tool {
					t.Errorf("tool %q has no contract under that canonical name", tool)
					continue
				}
				if reads := readsCursorKey(f, tool); reads != pages(t, c.InputSchema) {
					t.Errorf("tool %q: takes a cursor %v, but is given %s %v: its Settings must give the key to exactly the tools that page",
						tool, pages(t, c.InputSchema), wiring.CursorKey.Name(), reads)
				}
				if other, dup := seen[tool]; dup {
					t.Errorf("tool %q is in families %s and %s", tool, other, f.Name)
				}
				seen[tool] = f.Name
			}
			for _, g := range f.Grants {
				if err := g.Check(); err != nil {
					t.Errorf("grant %+v: %v", g, err)
				}
				for _, only := range g.Only {
					if !slices.Contains(f.Tools, only) {
						t.Errorf("grant %+v is limited to %q, which is not a tool of the family", g, only)
					}
				}
			}
			tools, err := family.Build(context.Background(), []family.Family{f}, env)
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			if len(tools) != len(f.Tools) {
				t.Errorf("built %d tools, family names %d", len(tools), len(f.Tools))
			}
		})
	}
}

// readsCursorKey reports whether the family gives tool's functions the
// cursor key.
func readsCursorKey(f family.Family, tool string) bool {
	return slices.ContainsFunc(f.SettingsFor(tool), func(s settings.Setting) bool { return s.Name() == wiring.CursorKey.Name() })
}

// TestToolsThatNeverPage: a tool function whose tool never pages starts
// without the cursor key (deployed, it is not given one), as the
// functions of the other tools of its family do with it.
func TestToolsThatNeverPage(t *testing.T) {
	stores := tooltest.BoltStores(t)
	for _, f := range toolset.Families {
		for _, tool := range f.Tools {
			if readsCursorKey(f, tool) {
				continue
			}
			lambda := map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001"}
			env := wiring.NewEnv(config.Config{Tools: []string{tool}}, nil).UseStores(stores, nil)
			env.Getenv = func(k string) string { return lambda[k] }
			_, err := family.Build(context.Background(), toolset.Families, env, tool)
			if err != nil && strings.Contains(err.Error(), wiring.CursorKey.Name()) {
				t.Errorf("%s does not page, but its function does not start without %s: %v", tool, wiring.CursorKey.Name(), err)
			}
		}
	}
}

// pages reports whether an input schema takes a cursor.
func pages(t *testing.T, inputSchema json.RawMessage) bool {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(inputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	_, ok := schema.Properties[cursor.Field]
	return ok
}

// TestBuildOneTool builds one tool the way its Lambda function does: only
// its family, only that tool.
func TestBuildOneTool(t *testing.T) {
	dir := t.TempDir()
	env := wiring.NewEnv(config.Config{Store: "dynamodb", DynamoEndpoint: "http://127.0.0.1:1", DataDir: dir}, nil)
	tools, err := family.Build(context.Background(), toolset.Families, env, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name != "hello" {
		t.Fatalf("got %v, want just hello", tools)
	}
	// hello's family never asked for storage, so none was opened (its
	// endpoint refuses every connection) and nothing was written.
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("building hello created %v in the data directory", entries)
	}
	if _, err := family.Build(context.Background(), toolset.Families, env, "no_such_tool"); err == nil {
		t.Fatal("building an unknown tool succeeded")
	}
}
