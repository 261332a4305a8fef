package mcpserver

import (
	"cmp"
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/pathmatch"
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

// TestRepoURI: resource URIs of repository files round-trip, the default
// repository's as DefaultRepo (what the tools' repo argument takes for
// it) and a named one's under its name; URIs with an invalid repository
// name, a query or a fragment name no file.
func TestRepoURI(t *testing.T) {
	for _, repo := range []string{"", "web"} {
		for _, p := range []string{"README.md", "net/http/server.go", "docs/a b.md", "src/%41.ts", "dir/#x"} {
			got, gotPath, ok := parseRepoURI(repoURI(repo, p))
			if !ok || gotPath != p || got != cmp.Or(repo, DefaultRepo) {
				t.Errorf("parseRepoURI(repoURI(%q, %q) = %q) = %q, %q, %v", repo, p, repoURI(repo, p), got, gotPath, ok)
			}
		}
	}
	for _, uri := range []string{"repo://-x/README.md", "repo://default/", "repo://default", "repo://default/a?x=1",
		"repo://default/a#b", "repo://u@default/a", "repo://a:80/b", "file:///README.md", "memory://decisions.jsonl", "%zz"} {
		if repo, p, ok := parseRepoURI(uri); ok {
			t.Errorf("parseRepoURI(%q) = %q, %q, want no file", uri, repo, p)
		}
	}
}

// TestGlobsFitListFiles: the fuzzy globs of a typed segment of any length
// stay within list_files' limit (globMax, its contract's), and still match
// a name that holds every typed character.
func TestGlobsFitListFiles(t *testing.T) {
	var contract struct {
		InputSchema struct {
			Properties struct {
				Patterns struct {
					Items struct{ MaxLength int } `json:"items"`
				} `json:"patterns"`
			} `json:"properties"`
		} `json:"inputSchema"`
	}
	raw, err := fs.ReadFile(contracts.FS, "list_files.json")
	if err != nil || json.Unmarshal(raw, &contract) != nil {
		t.Fatal(err)
	}
	if max := contract.InputSchema.Properties.Patterns.Items.MaxLength; max != globMax {
		t.Fatalf("globMax = %d, list_files takes globs of up to %d characters", globMax, max)
	}
	for _, unit := range []string{"a", "Z", "1", "é", "ß", "日", "a-b.c_"} {
		for n := 1; n <= 300; n += 7 {
			typed := strings.Repeat(unit, n)
			fuzzy, folders := fuzzyGlob(typed), folderGlob(typed)
			for _, glob := range []string{fuzzy, folders} {
				if got := utf8.RuneCountInString(glob); got > globMax {
					t.Fatalf("%d × %q: a glob of %d characters: %s", n, unit, got, glob)
				}
			}
			// As list_files reads them.
			name := "x" + typed + "y"
			for glob, file := range map[string]string{fuzzy: "src/" + name, folders: "src/" + name + "/f.go"} {
				g, err := pathmatch.NewFileGlob(glob)
				if err != nil || !g.Match(file) {
					t.Errorf("%d × %q: %s does not match %s (%v)", n, unit, glob, file, err)
				}
			}
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

// FuzzGlobs: whatever is typed, the fuzzy globs are valid list_files
// patterns within its limit.
func FuzzGlobs(f *testing.F) {
	for _, s := range []string{"tkn", strings.Repeat("abcdefghij", 6), "a*b", "[x]", "é日ß", "İı", "-_.", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, typed string) {
		for _, glob := range []string{fuzzyGlob(typed), folderGlob(typed)} {
			if glob == "" {
				continue
			}
			if n := utf8.RuneCountInString(glob); n > globMax {
				t.Fatalf("%q: a glob of %d characters", typed, n)
			}
			if _, err := pathmatch.NewFileGlob(glob); err != nil {
				t.Fatalf("%q: %s: %v", typed, glob, err)
			}
		}
	})
}
