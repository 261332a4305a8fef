package mcpserver

import (
	"testing"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/schema"
)

// TestComposedToolsHaveContracts: every tool the features call exists
// under the name they call it by.
func TestComposedToolsHaveContracts(t *testing.T) {
	set, err := schema.Load(contracts.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range composedTools {
		if c, ok := set.Get(name); !ok || c.Name != name {
			t.Errorf("%s has no contract", name)
		}
	}
	for _, p := range prompts {
		for _, name := range p.needs {
			if c, ok := set.Get(name); !ok || c.Name != name {
				t.Errorf("prompt %s needs %s, which has no contract", p.name, name)
			}
		}
	}
}

// TestRepoURI: resource URIs of repository files round-trip, and URIs of
// other repositories, or with a query or fragment, name no file.
func TestRepoURI(t *testing.T) {
	for _, p := range []string{"README.md", "net/http/server.go", "docs/a b.md", "src/%41.ts", "dir/#x"} {
		got, ok := parseRepoURI(repoURI(p))
		if !ok || got != p {
			t.Errorf("parseRepoURI(repoURI(%q) = %q) = %q, %v", p, repoURI(p), got, ok)
		}
	}
	for _, uri := range []string{"repo://other/README.md", "repo://default/", "repo://default", "repo://default/a?x=1",
		"repo://default/a#b", "repo://u@default/a", "file:///README.md", "memory://decisions.jsonl", "%zz"} {
		if p, ok := parseRepoURI(uri); ok {
			t.Errorf("parseRepoURI(%q) = %q, want no file", uri, p)
		}
	}
}

// TestFuzzy: the glob and the subsequence agree, in any case, and leave
// out what globs give a meaning.
func TestFuzzy(t *testing.T) {
	tests := []struct {
		value, glob string
		matches     []string
		misses      []string
	}{
		{"tkn", "*[tT]*[kK]*[nN]*", []string{"TokenManager.ts", "src/take/n"}, []string{"ntk"}},
		{"a*b", "*[aA]*[bB]*", []string{"AB"}, []string{"ba"}},
		{"**", "", nil, nil},
		{"1_", "*1*_*", []string{"v1_x"}, []string{"_1"}},
	}
	for _, tt := range tests {
		if got := fuzzyGlob(tt.value); got != tt.glob {
			t.Errorf("fuzzyGlob(%q) = %q, want %q", tt.value, got, tt.glob)
		}
		for _, s := range tt.matches {
			if !subsequence(s, tt.value) {
				t.Errorf("subsequence(%q, %q) = false", s, tt.value)
			}
		}
		for _, s := range tt.misses {
			if subsequence(s, tt.value) {
				t.Errorf("subsequence(%q, %q) = true", s, tt.value)
			}
		}
	}
}
