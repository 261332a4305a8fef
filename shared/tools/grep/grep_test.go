package grep_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/grep"
)

const tenant = "acme"

// fixture has nested .gitignore files, excluded and hidden folders,
// binary files, unicode, CRLF lines, a byte order mark and a long line.
var fixture = map[string]string{
	".gitignore":            "*.log\nignored_dir/\n",
	"a.go":                  "package a\n\nfunc Foo() {} // TODO: fix\nfunc bar() {}\n\n\tfunc indented() {}\n",
	"crlf.txt":              "first line\r\nfoo bar\r\nFOO end\r\n\r\n",
	"unicode.txt":           "Grüße aus Köln\nΣΊΣΥΦΟΣ and σίσυφος\nKELVIN \u212a sign\n\u017ftraße\nstrasse\n",
	"bom.txt":               "\xEF\xBB\xBFfoo at the start\nfoo again\n",
	"no-newline.txt":        "the last line has foo",
	"long.txt":              strings.Repeat("padding ", 120) + "needle " + strings.Repeat("tail ", 100) + "\n",
	"app.log":               "foo in an ignored file\n",
	"ignored_dir/x.txt":     "foo in an ignored folder\n",
	"sub/.gitignore":        "*.tmp\n!keep.tmp\n",
	"sub/x.tmp":             "foo ignored by sub/.gitignore\n",
	"sub/keep.tmp":          "foo re-included\n",
	"sub/code.ts":           "export interface AuthContext {}\nconst jwt = require('jsonwebtoken');\njwt.sign(payload, SECRET);\nfunction handleAuth() {}\n",
	"sub/deeper/.gitignore": "secret.txt\n",
	"sub/deeper/secret.txt": "foo secret\n",
	"sub/deeper/ok.txt":     "foo ok\nXXX marker\n",
	"node_modules/m/i.js":   "foo in node_modules\n",
	"build/out.txt":         "foo in build\n",
	"web/dist/x.js":         "foo in dist\n",
	".hidden/h.txt":         "foo hidden\n",
	".env":                  "FOO=secret\n",
	"bin.dat":               "foo\x00binary\n",
	// .rgignore beats .ignore beats .gitignore, whatever their depth.
	".ignore":                    "!extra/deep/kept.txt\n",
	"extra/.ignore":              "hidden-by-ignore.txt\n",
	"extra/hidden-by-ignore.txt": "foo hidden by .ignore\n",
	"extra/.gitignore":           "*.gen\n",
	"extra/.rgignore":            "!shown.gen\n",
	"extra/shown.gen":            "foo shown by .rgignore\n",
	"extra/other.gen":            "foo other\n",
	"extra/deep/.gitignore":      "kept.txt\n",
	"extra/deep/kept.txt":        "foo kept by the root .ignore\n",
}

// parityCases are searched by the tool and by ripgrep.
var parityCases = []struct {
	pattern, filePattern string
	caseSensitive        bool
}{
	{"foo", "", true},
	{"foo", "", false},
	{"FOO", "", false},
	{"bar.$", "", true},
	{"bar$", "", true},
	{"end$", "", false},
	{"TODO|FIXME|XXX", "", true},
	{"todo|fixme|xxx", "", false},
	{"interface.*Context", "", true},
	{"jwt.sign", "", false},
	{"function handleAuth", "sub/**/*.ts", true},
	{"^$", "", true},
	{"^func", "", true},
	{`^\s*func`, "", true},
	{"köln", "", false},
	{"σίσυφος", "", false},
	{"k sign", "", false},
	{"straße", "", false},
	{"strasse", "", false},
	{"x{2,}", "", false},
	{"[A-Z]{3,}", "", true},
	{"needle", "", true},
	{"foo|func", "*.go", true},
	{"o", "crlf.*", false},
	{"foo|func|jwt", "**/*.{go,ts}", true},
	{"e", "sub/*.ts", true},
	{"xyznonexistent123", "", false},
}

type matchResult struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Text    string `json:"text"`
	Context struct {
		Before []string `json:"before"`
		After  []string `json:"after"`
	} `json:"context"`
}

type grepResult struct {
	Matches       []matchResult `json:"matches"`
	Pattern       string        `json:"pattern"`
	TotalMatches  int           `json:"totalMatches"`
	HasMore       bool          `json:"hasMore"`
	FilesSearched int           `json:"filesSearched"`
	SearchTime    int           `json:"searchTime"`
	Message       string        `json:"message"`
}

func harness(t *testing.T, src repo.Source) *tooltest.Harness {
	t.Helper()
	db, err := boltstore.Open(t.TempDir() + "/t.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return tooltest.New(t, db.Stores(), grep.Tools(src, githistory.Revisions{}))
}

// TestGrep runs every test on the local directory and its S3 snapshot
// (one moto_server for the package).
func TestGrep(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		t.Fatal("ripgrep (rg) is needed for the parity test: apt-get install ripgrep (make test installs it)")
	}
	s3 := repotest.StartS3(t)
	dir := repotest.WriteDir(t, fixture)
	for _, src := range s3.Sources(t, tenant, dir) {
		t.Run(src.Name, func(t *testing.T) {
			h := harness(t, src.Source)
			t.Run("ripgrep parity", func(t *testing.T) { testParity(t, h, dir) })
			t.Run("output", func(t *testing.T) { testOutput(t, h) })
			t.Run("errors", func(t *testing.T) { testErrors(t, h) })
		})
	}
	t.Run("no repository", func(t *testing.T) { testNoRepository(t, s3) })
}

func search(t *testing.T, h *tooltest.Harness, args map[string]any) grepResult {
	t.Helper()
	raw, _ := json.Marshal(args)
	var out grepResult
	h.OK(t, tenant, grep.Tool, string(raw), &out)
	return out
}

// testParity compares every match with ripgrep's on the same files.
func testParity(t *testing.T, h *tooltest.Harness, dir string) {
	for _, c := range parityCases {
		name := fmt.Sprintf("%s cs=%t glob=%s", c.pattern, c.caseSensitive, c.filePattern)
		args := map[string]any{"pattern": c.pattern, "caseSensitive": c.caseSensitive, "limit": 100}
		if c.filePattern != "" {
			args["filePattern"] = c.filePattern
		}
		out := search(t, h, args)
		var got []string
		for _, m := range out.Matches {
			got = append(got, fmt.Sprintf("%s:%d:%d:%s", m.File, m.Line, m.Column, m.Text))
		}
		want := ripgrep(t, dir, c.pattern, c.filePattern, c.caseSensitive)
		slices.Sort(got)
		if out.TotalMatches != len(want) || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: %d matches\n got %q\nwant %q (rg)", name, out.TotalMatches, got, want)
		}
	}
}

// ripgrep runs rg the way the tool searches: .gitignore without needing a
// git checkout, the seed's excluded folders, hidden and binary files
// skipped (rg's defaults). It returns "file:line:column:text" sorted, the
// text without its "\r" and cut as the tool cuts long lines.
func ripgrep(t *testing.T, dir, pattern, glob string, caseSensitive bool) []string {
	t.Helper()
	args := []string{"--no-config", "--no-require-git", "--line-number", "--column", "--no-heading", "--color", "never"}
	for _, x := range repo.ExcludedDirs {
		args = append(args, "--glob", "!"+x+"/")
	}
	if glob != "" {
		args = append(args, "--glob", glob)
	}
	if !caseSensitive {
		args = append(args, "-i")
	}
	cmd := exec.Command("rg", append(args, "-e", pattern)...)
	cmd.Dir = dir
	raw, err := cmd.Output()
	if err != nil && len(raw) > 0 {
		t.Fatalf("rg %q: %v", pattern, err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		if line == "" {
			continue
		}
		parts := strings.SplitN(line, ":", 4)
		col, _ := strconv.Atoi(parts[2])
		text := strings.TrimSuffix(parts[3], "\r")
		if len(text) > 400 { // the tool's cut, checked by testOutput
			text = cutLike(text, col-1)
		}
		out = append(out, fmt.Sprintf("%s:%s:%s:%s", parts[0], parts[1], parts[2], text))
	}
	slices.Sort(out)
	return out
}

// cutLike cuts an ASCII line as the tool does: 400 bytes from 100 before
// the match.
func cutLike(s string, at int) string {
	start := max(at-100, 0)
	end := min(start+400, len(s))
	out := s[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(s) {
		out += "…"
	}
	return out
}

func testOutput(t *testing.T, h *tooltest.Harness) {
	// Context: two lines before and after, without "\r".
	out := search(t, h, map[string]any{"pattern": "FOO end", "caseSensitive": true})
	if len(out.Matches) != 1 {
		t.Fatalf("FOO end: %+v", out)
	}
	m := out.Matches[0]
	if m.File != "crlf.txt" || m.Line != 3 || m.Column != 1 || m.Text != "FOO end" ||
		!slices.Equal(m.Context.Before, []string{"first line", "foo bar"}) || !slices.Equal(m.Context.After, []string{""}) {
		t.Errorf("match %+v", m)
	}
	// First line of a file: no lines before; last line without newline.
	out = search(t, h, map[string]any{"pattern": "the last line"})
	if m := out.Matches[0]; len(m.Context.Before) != 0 || len(m.Context.After) != 0 || m.Text != "the last line has foo" {
		t.Errorf("match %+v", m)
	}
	// limit returns that many; totalMatches counts all, in file order, and
	// hasMore says whether there are more than those returned.
	all := search(t, h, map[string]any{"pattern": "foo", "limit": 100})
	two := search(t, h, map[string]any{"pattern": "foo", "limit": 2})
	exact := search(t, h, map[string]any{"pattern": "foo", "limit": all.TotalMatches})
	if all.HasMore || !two.HasMore || exact.HasMore || len(exact.Matches) != all.TotalMatches {
		t.Errorf("hasMore: %v with all %d, %v with 2, %v with exactly as many", all.HasMore, all.TotalMatches, two.HasMore, exact.HasMore)
	}
	if len(two.Matches) != 2 || two.TotalMatches != all.TotalMatches || all.TotalMatches < 5 ||
		fmt.Sprint(two.Matches) != fmt.Sprint(all.Matches[:2]) {
		t.Errorf("limit 2: %d of %d; all: %d", len(two.Matches), two.TotalMatches, all.TotalMatches)
	}
	if !strings.HasPrefix(two.Message, "Showing the first 2 of") {
		t.Errorf("message %q", two.Message)
	}
	// Files searched: every searchable file, or those the glob keeps.
	if all.FilesSearched != 11 {
		t.Errorf("filesSearched %d, want 11", all.FilesSearched)
	}
	// Unlike rg --glob, filePattern never brings back an ignored file.
	txt := search(t, h, map[string]any{"pattern": "foo", "filePattern": "*.txt", "limit": 100})
	for _, m := range txt.Matches {
		if !strings.HasSuffix(m.File, ".txt") || m.File == "sub/deeper/secret.txt" {
			t.Errorf("*.txt matched %s", m.File)
		}
	}
	if txt.TotalMatches != 7 || txt.FilesSearched != 7 { // foo and FOO: case-insensitive by default
		t.Errorf("*.txt: %d matches in %d files", txt.TotalMatches, txt.FilesSearched)
	}
	if ts := search(t, h, map[string]any{"pattern": "x", "filePattern": "**/*.ts"}); ts.FilesSearched != 1 {
		t.Errorf("filesSearched with **/*.ts: %d", ts.FilesSearched)
	}
	// The long line is cut around the match and says so.
	long := search(t, h, map[string]any{"pattern": "needle"}).Matches[0]
	if long.Column != 961 || !strings.HasPrefix(long.Text, "…") || !strings.HasSuffix(long.Text, "…") ||
		!strings.Contains(long.Text, "needle") || len(long.Text) > 410 {
		t.Errorf("long line: column %d, %d bytes: %q", long.Column, len(long.Text), long.Text)
	}
	// No matches: the seed's message.
	none := search(t, h, map[string]any{"pattern": "nonexistent"})
	if none.Matches == nil || len(none.Matches) != 0 || none.TotalMatches != 0 || none.Message != "No matches found for pattern 'nonexistent'" {
		t.Errorf("no matches: %+v", none)
	}
}

func testErrors(t *testing.T, h *tooltest.Harness) {
	for _, p := range []string{"[invalid(", "foo(?=bar)", "a{1001}", `\p{NoSuchClass}`} {
		raw, _ := json.Marshal(map[string]string{"pattern": p})
		err := h.Fail(t, tenant, grep.Tool, string(raw), toolerr.InvalidInput)
		if !strings.HasPrefix(err.Message, "Invalid regex pattern") || err.Details["pattern"] != p {
			t.Errorf("%s: %+v", p, err)
		}
	}
	h.Fail(t, tenant, grep.Tool, `{"pattern":"foo","filePattern":"[unclosed"}`, toolerr.InvalidInput)
}

// testNoRepository: a tenant without a snapshot is told how to push one.
func testNoRepository(t *testing.T, s3 *repotest.S3) {
	h := harness(t, s3.Source(repo.S3Options{}))
	err := h.Fail(t, "nobody", grep.Tool, `{"pattern":"foo"}`, toolerr.ResourceNotFound)
	if !strings.Contains(err.Message, "scripts/snapshot push") {
		t.Errorf("message %q", err.Message)
	}
}
