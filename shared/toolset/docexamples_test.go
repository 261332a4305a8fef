package toolset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/localserver"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
)

// curlCall is a curl command of a page's code block, against the local
// server, and the answer the page shows under it ("" when it shows none).
type curlCall struct {
	line    int // where the command starts, 1-based
	method  string
	path    string // the URL's path and query
	headers map[string]string
	body    string
	shown   string
}

// TestDocExamples runs the curl commands of the README and of every page
// under docs/ that call the local server (http://127.0.0.1:8000 or
// localhost:8000), as written and in the page's order, against a real
// local server (a fresh one per page, auth off) serving the example
// project: each must succeed, and where the page shows the answer under
// the command, the real answer must contain it, as a contract example's
// output must (`…` or `...` stands for any value, or the rest of an object
// or list; a string ending in `…` for any string it starts).
func TestDocExamples(t *testing.T) {
	root := filepath.Join("..", "..")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"))
	online := tooltest.InternetReachable()
	ran := 0
	for _, page := range pages {
		calls := curlCalls(t, readText(t, page))
		if len(calls) == 0 {
			continue
		}
		t.Run(filepath.Base(page), func(t *testing.T) {
			base := docServer(t)
			for _, c := range calls {
				ran++
				status, got := c.do(t, base)
				if c.shown == "" {
					if status >= 300 {
						t.Errorf("line %d: %s %s answered %d: %s", c.line, c.method, c.path, status, got)
					}
					continue
				}
				if !online && strings.Contains(c.shown, "https://") && strings.Contains(got, `"UPSTREAM_ERROR"`) {
					continue // it reaches the internet, which cannot be reached here
				}
				if at, ok := answerContains(got, c.shown); !ok {
					t.Errorf("line %d: %s %s answered (%d)\n%s\nwhich does not contain what the page shows (at %s)\n%s", c.line, c.method, c.path, status, got, at, c.shown)
				}
			}
		})
	}
	if ran == 0 {
		t.Fatal("no curl command found: the search is broken")
	}
}

// docServer starts a local server over the example project, with a data
// directory of its own, and returns its base URL.
func docServer(t *testing.T) string {
	cfg, err := config.FromEnv(func(k string) string {
		return map[string]string{"TOOLSHED_DATA_DIR": t.TempDir(), "TOOLSHED_REPO_DIR": exampleRepo}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := localserver.Build(context.Background(), cfg, slog.New(slog.DiscardHandler), "docs", true)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler)
	t.Cleanup(func() { srv.Close(); s.Close() })
	return srv.URL
}

// localURL is the local server's address as the docs write it.
var localURL = regexp.MustCompile(`^http://(127\.0\.0\.1|localhost):8000(/.*)$`)

// curlCalls finds the curl commands against the local server in the
// fenced code blocks of a page, with the answer shown on the line after.
func curlCalls(t *testing.T, page string) []curlCall {
	var calls []curlCall
	lines := strings.Split(page, "\n")
	inBlock := false
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock || !strings.HasPrefix(line, "curl ") {
			continue
		}
		start := i
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(lines[i])
		}
		c, ok := parseCurl(t, line)
		if !ok {
			continue
		}
		c.line = start + 1
		if i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "{") {
			c.shown = strings.TrimSpace(lines[i+1])
		}
		calls = append(calls, c)
	}
	return calls
}

// parseCurl reads the curl command line; ok is false for one that is not
// against the local server.
func parseCurl(t *testing.T, line string) (curlCall, bool) {
	words := shellWords(t, line)
	c := curlCall{headers: map[string]string{}}
	hasData := false
	for i := 1; i < len(words); i++ {
		switch w := words[i]; {
		case w == "-X" && i+1 < len(words):
			i++
			c.method = words[i]
		case w == "-H" && i+1 < len(words):
			i++
			k, v, _ := strings.Cut(words[i], ":")
			c.headers[http.CanonicalHeaderKey(strings.TrimSpace(k))] = strings.TrimSpace(v)
		case (w == "-d" || w == "--data") && i+1 < len(words):
			i++
			c.body, hasData = words[i], true
		case strings.HasPrefix(w, "http"):
			m := localURL.FindStringSubmatch(w)
			if m == nil {
				return c, false
			}
			c.path = m[2]
		}
	}
	if c.path == "" {
		return c, false
	}
	if hasData {
		if c.method == "" {
			c.method = http.MethodPost
		}
		if _, ok := c.headers["Content-Type"]; !ok {
			c.headers["Content-Type"] = "application/x-www-form-urlencoded" // what curl -d sends
		}
	}
	if c.method == "" {
		c.method = http.MethodGet
	}
	return c, true
}

// shellWords splits a command line as a POSIX shell does for the quoting
// the docs use: single quotes, double quotes, and spaces between words.
func shellWords(t *testing.T, line string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; ch {
		case ' ', '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
		case '\'', '"':
			end := strings.IndexByte(line[i+1:], ch)
			if end < 0 {
				t.Fatalf("unbalanced quote in %q", line)
			}
			w.WriteString(line[i+1 : i+1+end])
			i, inWord = i+1+end, true
		default:
			w.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// do sends the call to the server at base and returns the status and body.
func (c curlCall) do(t *testing.T, base string) (int, string) {
	req, err := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// The shortenings a page's answer may use, and the JSON they become: "…"
// (anyValue) stands for any value, and ends a list that may go on.
var shortenings = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\{\s*(\.\.\.|…)\s*\}|\[\s*(\.\.\.|…)\s*\]`), `"…"`},
	{regexp.MustCompile(`,\s*(\.\.\.|…)\s*\}`), `}`},
	{regexp.MustCompile(`,\s*(\.\.\.|…)\s*\]`), `,"…"]`},
	{regexp.MustCompile(`:\s*(\.\.\.|…)\s*([,}\]])`), `:"…"$2`},
	{regexp.MustCompile(`\.\.\."`), `…"`},
}

// anyValue is what a shortening stands for.
const anyValue = "…"

// answerContains reports whether the real answer contains the one shown,
// and where they differ when not.
func answerContains(got, shown string) (string, bool) {
	for _, s := range shortenings {
		shown = s.re.ReplaceAllString(shown, s.with)
	}
	var want, have any
	if err := json.Unmarshal([]byte(shown), &want); err != nil {
		return fmt.Sprintf("the page's answer, %s, is not JSON with shortenings: %v", shown, err), false
	}
	if err := json.Unmarshal([]byte(got), &have); err != nil {
		return "the real answer is not JSON", false
	}
	return shownIn(have, want, "answer")
}

// shownIn is tooltest.Contains with the shortenings: want's anyValue
// matches anything, a string ending in it any string it starts, and a
// list ending in it any longer list.
func shownIn(got, want any, at string) (string, bool) {
	switch w := want.(type) {
	case string:
		g, ok := got.(string)
		if w == anyValue {
			return "", true
		}
		if prefix, cut := strings.CutSuffix(w, anyValue); cut {
			return at, ok && strings.HasPrefix(g, prefix)
		}
		return at, ok && g == w
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return at, false
		}
		for k, wv := range w {
			if _, present := g[k]; !present {
				return at + "." + k, false
			}
			if p, ok := shownIn(g[k], wv, at+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		open := len(w) > 0 && w[len(w)-1] == anyValue
		if open {
			w = w[:len(w)-1]
		}
		if !ok || len(g) < len(w) || !open && len(g) != len(w) {
			return at, false
		}
		for i := range w {
			if p, ok := shownIn(g[i], w[i], fmt.Sprintf("%s[%d]", at, i)); !ok {
				return p, false
			}
		}
		return "", true
	}
	return tooltest.Contains(got, want, at)
}
