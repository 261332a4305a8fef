package toolset_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/schema"
	secretsettings "github.com/toolshed/toolshed/shared/secrets"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/toolset"
)

// TestReadmeToolTable keeps the README's tool table true: every contract
// is listed once, and "served" means the tool is implemented.
func TestReadmeToolTable(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := schema.Load(contracts.FS)
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile("(?m)^\\| `([a-z_-]+)` \\| (served|planned) \\|").FindAllStringSubmatch(string(readme), -1)
	listed := map[string]string{}
	for _, r := range rows {
		if _, dup := listed[r[1]]; dup {
			t.Errorf("README lists %s twice", r[1])
		}
		listed[r[1]] = r[2]
	}
	implemented := toolset.Tools()
	for _, name := range set.Names() {
		want := "planned"
		if slices.Contains(implemented, name) {
			want = "served"
		}
		if got, ok := listed[name]; !ok {
			t.Errorf("README does not list %s", name)
		} else if got != want {
			t.Errorf("README says %s is %s; it is %s", name, got, want)
		}
	}
	if len(listed) != len(set.Names()) {
		t.Errorf("README lists %d tools, contracts define %d", len(listed), len(set.Names()))
	}
}

// TestReadmeListsSettings keeps the README's configuration table true to
// the declarations: every setting, process-wide (shared/config), the
// indexer's, the secrets' and each family's, appears as the row its
// declaration renders (name, default, meaning).
func TestReadmeListsSettings(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(readme), "\n")
	declared := map[string][]settings.Setting{
		"process-wide": config.Settings,
		"indexer":      append([]settings.Setting{indexer.QueueURL}, indexer.Settings...),
		"secrets":      {secretsettings.Parameters},
	}
	for _, f := range toolset.Families {
		declared["family "+f.Name] = append(declared["family "+f.Name], f.AllSettings()...)
	}
	for owner, ss := range declared {
		if len(ss) == 0 && !strings.HasPrefix(owner, "family ") {
			t.Errorf("%s declares no setting", owner)
		}
		for _, s := range ss {
			if !slices.Contains(lines, s.Row()) {
				t.Errorf("docs/configuration.md's table lacks the row of %s (%s); it reads:\n%s", s.Name(), owner, s.Row())
			}
		}
	}
}

// TestDocsLinks: every relative link of the README and the pages under
// docs/ leads to a file that exists and, with a #fragment, to a heading
// of that page (as GitHub names headings).
func TestDocsLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"))
	fence := regexp.MustCompile("(?s)```.*?```")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(fence.ReplaceAllString(string(b), ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, fragment, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = filepath.Join(filepath.Dir(page), file)
			}
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s links to %s: no such file", page, target)
				continue
			}
			if fragment != "" && strings.HasSuffix(dest, ".md") && !slices.Contains(anchors(dest), fragment) {
				t.Errorf("%s links to %s: %s has no such heading", page, target, dest)
			}
		}
	}
}

// heading is a Markdown heading's line.
var heading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)

// slug is the anchor GitHub gives the heading h.
func slug(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`).ReplaceAllString(h, "")
	return strings.ReplaceAll(h, " ", "-")
}

// anchors lists the anchors of the headings of the page at p (none if it
// cannot be read).
func anchors(page string) []string {
	b, err := os.ReadFile(page)
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range heading.FindAllStringSubmatch(string(b), -1) {
		out = append(out, slug(m[1]))
	}
	return out
}

// TestSmokeExampleCounts keeps the smoke test's output shown in
// docs/deploy.md true to the tools a deployment serves: one row per tool,
// three calls (one per route) each.
func TestSmokeExampleCounts(t *testing.T) {
	page := readText(t, filepath.Join("..", "..", "docs", "deploy.md"))
	tools := regexp.MustCompile(`(?m)^toolshed \S+ at \S+: (\d+) tools$`).FindStringSubmatch(page)
	calls := regexp.MustCompile(`(?m)^(\d+) calls, 0 problems$`).FindStringSubmatch(page)
	if tools == nil || calls == nil {
		t.Fatal("docs/deploy.md shows no smoke test output")
	}
	served := len(toolset.Tools())
	if tools[1] != fmt.Sprint(served) || calls[1] != fmt.Sprint(3*served) {
		t.Errorf("docs/deploy.md's smoke output shows %s tools and %s calls; %d tools are served, so %d calls", tools[1], calls[1], served, 3*served)
	}
}
