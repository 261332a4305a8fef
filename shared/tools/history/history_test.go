package history_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/testenv/fakesecret"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/tools/history"
)

// tools returns the history tools over dir, by name.
func tools(t *testing.T, dir string) map[string]toolkit.Handler {
	t.Helper()
	src := repotest.Local(t, dir)
	out := map[string]toolkit.Handler{}
	for _, tool := range history.Tools(src, &githistory.Local{}, cursor.RandomKey(), nil) {
		out[tool.Name] = tool.Handler
	}
	return out
}

// call calls a tool and decodes its result into a map.
func call(t *testing.T, h toolkit.Handler, args string) (map[string]any, error) {
	t.Helper()
	res, err := h(context.Background(), toolkit.Call{Tenant: "t", Args: json.RawMessage(args)})
	if err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(res.Data)
	var m map[string]any
	json.Unmarshal(raw, &m)
	return m, nil
}

func code(err error) toolerr.Code {
	var te *toolerr.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return ""
}

func TestListCommitsPages(t *testing.T) {
	h := tools(t, repotest.GitHistory(t))[history.ListCommitsTool]
	var subjects []string
	args := `{"limit":2}`
	for page := 0; ; page++ {
		out, err := call(t, h, args)
		if err != nil || page > 5 {
			t.Fatalf("page %d: %v", page, err)
		}
		for _, c := range out["commits"].([]any) {
			subjects = append(subjects, c.(map[string]any)["subject"].(string))
		}
		next, _ := out["next_cursor"].(string)
		if next == "" {
			break
		}
		args = fmt.Sprintf(`{"limit":2,"cursor":%q}`, next)
		if page == 0 {
			// A cursor is tied to its call's arguments.
			if _, err := call(t, h, fmt.Sprintf(`{"limit":2,"author":"ada","cursor":%q}`, next)); code(err) != toolerr.InvalidInput {
				t.Errorf("a cursor of another listing: %v", err)
			}
		}
	}
	want := []string{"Grow the app", "Merge branch 'feature'", "Document the server", "Rename server to app", "Add a logo", "Add the server"}
	if !slices.Equal(subjects, want) {
		t.Errorf("got %q, want %q", subjects, want)
	}
}

// lines is n numbered lines of about width bytes each.
func lines(prefix string, n, width int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s %d %s\n", prefix, i, strings.Repeat("x", width))
	}
	return b.String()
}

func TestGetCommitPagesWithinTheByteBudget(t *testing.T) {
	dir := repotest.GitHistory(t)
	big := lines("a", 1200, 100) // about 120 KB: two do not fit a page
	repotest.GitCommit(t, dir, "Big files", map[string]string{"big/a.txt": big, "big/b.txt": big, "big/c.txt": big, "big/d.txt": lines("d", 3000, 100)})
	h := tools(t, dir)[history.GetCommitTool]
	var pages [][]string
	args := `{"commit":"HEAD","limit":50}`
	for len(pages) < 6 {
		out, err := call(t, h, args)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range out["files"].([]any) {
			f := f.(map[string]any)
			names = append(names, fmt.Sprint(f["path"], " ", f["note"] != nil))
		}
		pages = append(pages, names)
		next, _ := out["next_cursor"].(string)
		if next == "" {
			break
		}
		args = fmt.Sprintf(`{"commit":"HEAD","limit":50,"cursor":%q}`, next)
	}
	// Each 120 KB file fills a page; the 300 KB one is cut, saying so.
	want := [][]string{{"big/a.txt false"}, {"big/b.txt false"}, {"big/c.txt false"}, {"big/d.txt true"}}
	if fmt.Sprint(pages) != fmt.Sprint(want) {
		t.Errorf("pages %v, want %v", pages, want)
	}
}

func TestASecretInHistoryIsNeverShown(t *testing.T) {
	dir := repotest.GitHistory(t)
	repotest.GitCommit(t, dir, "Deploy notes", map[string]string{"notes/deploy.txt": "deploy notes\n\n" + fakesecret.PrivateKey(), "notes/plain.txt": "plain\n"})
	repotest.GitCommit(t, dir, "Drop the key", map[string]string{"notes/deploy.txt": "deploy notes\n"})
	all := tools(t, dir)
	out, err := call(t, all[history.GetCommitTool], `{"commit":"HEAD~1","limit":50}`)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(out)
	if strings.Contains(string(raw), "PRIVATE KEY") || !strings.Contains(string(raw), "withheld: ") {
		t.Errorf("get_commit shows the secret or does not say it is withheld: %s", raw)
	}
	found, err := call(t, all[history.SearchCommitsTool], `{"pattern":"PRIVATE KEY","limit":10}`)
	if err != nil || len(found["commits"].([]any)) != 0 {
		t.Errorf("search_commits found the secret: %v %v", found, err)
	}
	if _, err := call(t, all[history.BlameTool], `{"path":"notes/deploy.txt","ref":"HEAD~1"}`); code(err) != toolerr.PathNotAllowed {
		t.Errorf("blame of the file holding the secret: %v", err)
	}
	for _, tool := range []string{history.ListCommitsTool, history.SearchCommitsTool} {
		if _, err := call(t, all[tool], `{"pattern":"x","path":".env"}`); tool == history.SearchCommitsTool && code(err) != toolerr.PathNotAllowed {
			t.Errorf("%s of .env: %v", tool, err)
		}
	}
}

func TestBlameSaysWhatIsUncommitted(t *testing.T) {
	dir := repotest.GitHistory(t)
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Demo\nNew line.\n\nThe server answers.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := call(t, tools(t, dir)[history.BlameTool], `{"path":"README.md"}`)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(out["hunks"])
	want := `[{"author":"Ada","authorEmail":"ada@example.com","commit":"b634b8173d02b52278e689e01f2e5d78fc243b68","date":"2024-03-01T10:00:00Z","lines":1,"origLine":1,"startLine":1,"summary":"Add the server"},` +
		`{"commit":null,"lines":1,"startLine":2,"uncommitted":true},` +
		`{"author":"Grace","authorEmail":"grace@example.com","commit":"2f18c973818ca61e016e942ab04a12ac77d9bedc","date":"2024-03-01T13:00:00Z","lines":2,"origLine":2,"startLine":3,"summary":"Document the server"}]`
	if string(raw) != want || out["complete"] != true {
		t.Errorf("hunks\n%s\nwant\n%s", raw, want)
	}
}

// pages calls a tool with args and every next_cursor after, and returns
// what key lists on each page, by name.
func pages(t *testing.T, h toolkit.Handler, args map[string]any, key, name string) [][]string {
	t.Helper()
	var out [][]string
	for len(out) < 10 {
		raw, _ := json.Marshal(args)
		res, err := call(t, h, string(raw))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range res[key].([]any) {
			names = append(names, fmt.Sprint(e.(map[string]any)[name]))
		}
		out = append(out, names)
		next, _ := res["next_cursor"].(string)
		if next == "" {
			return out
		}
		args["cursor"] = next
	}
	t.Fatal("more than 10 pages")
	return nil
}

func TestSearchCommitsPages(t *testing.T) {
	h := tools(t, repotest.GitHistory(t))[history.SearchCommitsTool]
	got := pages(t, h, map[string]any{"pattern": "line [0-9]", "limit": 2}, "commits", "subject")
	want := [][]string{{"Grow the app", "Merge branch 'feature'"}, {"Rename server to app", "Add the server"}, nil}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pages %q, want %q", got, want)
	}
}

func TestListRefsPages(t *testing.T) {
	h := tools(t, repotest.GitHistory(t))[history.ListRefsTool]
	got := pages(t, h, map[string]any{"limit": 2}, "refs", "name")
	if fmt.Sprint(got) != "[[feature main] [v1.0]]" {
		t.Errorf("pages %q", got)
	}
}

// TestHostilePaths: paths that look like options, pathspec magic or
// revisions are paths, and the deny rules hold for them.
func TestHostilePaths(t *testing.T) {
	all := tools(t, repotest.GitHistory(t))
	tests := []struct {
		tool, args string
		want       toolerr.Code // "" succeeds, with nothing found
	}{
		{history.ListCommitsTool, `{"path":"--all","limit":5}`, ""},
		{history.ListCommitsTool, `{"path":":(glob)**","limit":5}`, ""},
		{history.BlameTool, `{"path":"--help"}`, toolerr.ResourceNotFound},
		{history.BlameTool, `{"path":"-L1,2","ref":"main"}`, toolerr.ResourceNotFound},
		{history.BlameTool, `{"path":".git/config","ref":"main"}`, toolerr.PathNotAllowed},
		{history.GetCommitTool, `{"commit":"main","path":"--stat","limit":5}`, ""},
		{history.CompareTool, `{"base":"main~1","head":"main","path":".env/x","limit":5}`, toolerr.PathNotAllowed},
		{history.CompareTool, `{"base":"main@{-1}","head":"main","limit":5}`, toolerr.ResourceNotFound},
	}
	for _, tt := range tests {
		out, err := call(t, all[tt.tool], tt.args)
		if code(err) != tt.want {
			t.Errorf("%s %s: %v, want %q", tt.tool, tt.args, err, tt.want)
			continue
		}
		raw, _ := json.Marshal(out)
		if tt.want == "" && (strings.Contains(string(raw), `"hash"`) && tt.tool == history.ListCommitsTool || strings.Contains(string(raw), `"path":"`)) {
			t.Errorf("%s %s found something: %s", tt.tool, tt.args, raw)
		}
	}
}

// TestBlameOfAFileNotCommittedYet: every line of a new file is
// uncommitted.
func TestBlameOfAFileNotCommittedYet(t *testing.T) {
	dir := repotest.GitHistory(t)
	if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := call(t, tools(t, dir)[history.BlameTool], `{"path":"new.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(out["hunks"])
	if string(raw) != `[{"commit":null,"lines":2,"startLine":1,"uncommitted":true}]` || out["complete"] != true {
		t.Errorf("hunks %s, complete %v", raw, out["complete"])
	}
}

// TestRevisionsAreCheckedFirst: a revision that looks like an option is
// INVALID_INPUT on any repository, one without a history too.
func TestRevisionsAreCheckedFirst(t *testing.T) {
	all := tools(t, t.TempDir())
	for tool, args := range map[string]string{
		history.ListCommitsTool:   `{"ref":"--all"}`,
		history.GetCommitTool:     `{"commit":"-p"}`,
		history.CompareTool:       `{"base":"main","head":"--no-index"}`,
		history.BlameTool:         `{"path":"a","ref":"--since=1.day"}`,
		history.SearchCommitsTool: `{"pattern":"x","ref":"-S"}`,
	} {
		if _, err := call(t, all[tool], args); code(err) != toolerr.InvalidInput {
			t.Errorf("%s %s: %v", tool, args, err)
		}
	}
	if _, err := call(t, all[history.ListRefsTool], `{}`); code(err) != toolerr.ResourceNotFound {
		t.Errorf("list_refs without a history: %v", err)
	}
}
