package toolset_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// pagePointer is a pointer to a page of the docs (or the README), with an
// optional #section: what a message, a help line or a config file names
// for a person to read.
var pagePointer = regexp.MustCompile(`\b(docs/[a-z0-9-]+\.md|README\.md)(#[a-z0-9-]+)?`)

// vaguePointer names the README without a page or section a reader can
// follow ("see README for figures", "(README: Tenants and API keys)"):
// sections leave the README for pages under docs/, and such a pointer
// then leads nowhere.
var vaguePointer = regexp.MustCompile(`\bREADME\b(?:[^.]|$)`)

// TestDocPointers follows every pointer to the docs that a person meets
// outside them — in the messages of the Go code (its string literals),
// in the Makefile (`make help` and its comments) and in the config files —
// as TestDocsLinks follows the links of the docs: each names a page that
// exists and, with a #section, a heading of it. A pointer to the README by
// name only is refused (test helpers under shared/testenv are not read:
// their paths are fixtures), and so is a `make help` line pointing "below" or
// "above" (help shows only the help lines).
func TestDocPointers(t *testing.T) {
	root := filepath.Join("..", "..")
	texts := map[string][]string{} // where → the texts a person reads there
	for _, dir := range []string{"shared", "functions", "scripts", "infra"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && (d.Name() == "testdata" || d.Name() == "testenv" || d.Name() == "third_party" || d.Name() == "node_modules" || d.Name() == "cdk.out"):
				return filepath.SkipDir
			case strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go"):
				texts[p] = stringLiterals(t, p)
			case !d.IsDir() && slices.Contains([]string{".json", ".toml", ".yml", ".yaml", ".txt"}, filepath.Ext(p)):
				texts[p] = []string{readText(t, p)}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"samconfig.toml", "samenv.json", "package.json"} {
		texts[f] = []string{readText(t, filepath.Join(root, f))}
	}
	help := regexp.MustCompile(`(?m)^## .*$`)
	makefile := readText(t, filepath.Join(root, "Makefile"))
	texts["Makefile"] = regexp.MustCompile(`(?m)^#.*$`).FindAllString(makefile, -1)
	for _, line := range help.FindAllString(makefile, -1) {
		if regexp.MustCompile(`\b(below|above)\b`).MatchString(line) {
			t.Errorf("make help line %q points below or above: make help shows only its own lines; name a page under docs/", line)
		}
	}
	checked := 0
	for where, list := range texts {
		for _, text := range list {
			if m := vaguePointer.FindString(text); m != "" {
				t.Errorf("%s: %q names the README without a page: point to docs/<page>.md#<section>", where, excerpt(text, m))
			}
			for _, m := range pagePointer.FindAllStringSubmatch(text, -1) {
				checked++
				page := filepath.Join(root, m[1])
				if _, err := os.Stat(page); err != nil {
					t.Errorf("%s points to %s: no such page", where, m[0])
				} else if m[2] != "" && !slices.Contains(anchors(page), m[2][1:]) {
					t.Errorf("%s points to %s: %s has no such heading", where, m[0], m[1])
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no pointer found: the search is broken")
	}
}

// stringLiterals returns the string literals of the Go file at p, as
// their values.
func stringLiterals(t *testing.T, p string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				out = append(out, s)
			}
		}
		return true
	})
	return out
}

// readText returns the file at p.
func readText(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// excerpt returns up to 60 bytes of text around m.
func excerpt(text, m string) string {
	i := strings.Index(text, m)
	return text[max(0, i-30):min(len(text), i+len(m)+30)]
}

// TestMakeTargetsDocumented: every target `make help` lists is named
// (`make <target>`) on a page of the docs or in the README, so that none
// is found only by reading the Makefile.
func TestMakeTargetsDocumented(t *testing.T) {
	root := filepath.Join("..", "..")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var docs strings.Builder
	for _, p := range append(pages, filepath.Join(root, "README.md")) {
		docs.WriteString(readText(t, p))
	}
	// A help block's first line names its targets (as `make help` reads
	// them); the lines after it go on with the text.
	first := regexp.MustCompile(`^## ([a-z][a-z0-9 /-]*?): `)
	var targets []string
	inBlock := false
	for _, line := range strings.Split(readText(t, filepath.Join(root, "Makefile")), "\n") {
		if m := first.FindStringSubmatch(line); m != nil && !inBlock {
			targets = append(targets, strings.Split(m[1], " / ")...)
		}
		inBlock = strings.HasPrefix(line, "## ")
	}
	if len(targets) == 0 {
		t.Fatal("no help line found: the search is broken")
	}
	for _, target := range targets {
		if !regexp.MustCompile(`\bmake ` + regexp.QuoteMeta(target) + `\b`).MatchString(docs.String()) {
			t.Errorf("make %s is on no page of the docs", target)
		}
	}
}
