package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/repo"
)

func TestDocQuestion(t *testing.T) {
	for _, tc := range []struct{ sentence, name, want string }{
		{"ReadMIMEHeader reads a MIME-style header from r.", "ReadMIMEHeader", "reads a MIME-style header from r"},
		{"A Reader implements buffering for an io.Reader object.", "Reader", "implements buffering for an io.Reader object"},
		{"Return the number of items.", "count", "Return the number of items"},
		{"Reader", "Reader", "Reader"}, // nothing would be left
	} {
		if got := docQuestion(tc.sentence, tc.name); got != tc.want {
			t.Errorf("docQuestion(%q, %q) = %q, want %q", tc.sentence, tc.name, got, tc.want)
		}
	}
}

func TestBlank(t *testing.T) {
	for _, tc := range []struct {
		text     string
		from, to int
		want     string
	}{
		{"// Doc line.\n// More.\nfunc F() {}", 0, 21, "            \n        \nfunc F() {}"},
		{"def f():\n    \"\"\"Doc.\n    more\"\"\"\n    pass", 13, 33, "def f():\n    \"\"     \n           \n    pass"},
		{"x = 1 // trailing", 6, 17, "x = 1            "},
	} {
		got := blank(tc.text, tc.from, tc.to)
		if got != tc.want {
			t.Errorf("blank(%q, %d, %d) = %q, want %q", tc.text, tc.from, tc.to, got, tc.want)
		}
		if len(got) != len(tc.text) || strings.Count(got, "\n") != strings.Count(tc.text, "\n") {
			t.Errorf("blank(%q) moved bytes or lines", tc.text)
		}
	}
}

// TestCandidates makes the questions of a small corpus: the name dropped,
// tests and short or shared sentences left out, the doc blanked from what
// is indexed, and halves fixed by path.
func TestCandidates(t *testing.T) {
	files := []*repo.File{
		repo.NewFile("a/reader.go", []byte("package a\n\n// ReadHeader parses the MIME header block of a message.\nfunc ReadHeader() {}\n\n// String returns the name.\nfunc (x X) String() string { return \"\" }\n"), time.Time{}),
		repo.NewFile("b/writer.go", []byte("package b\n\n// String returns the name.\nfunc (y Y) String() string { return \"\" }\n\n// Flush writes buffered bytes.\nfunc Flush() {}\n"), time.Time{}),
		repo.NewFile("a/reader_test.go", []byte("package a\n\n// TestRead checks reading several kinds of headers.\nfunc TestRead() {}\n"), time.Time{}),
		repo.NewFile("p/m.py", []byte("def spool(data):\n    \"\"\"Copy the data into a temporary spool file.\"\"\"\n    return data\n"), time.Time{}),
	}
	cs, documented := candidates(files)
	var got []string
	for _, c := range cs {
		got = append(got, c.target.path+":"+strconv.Itoa(c.target.line)+" "+c.target.name+": "+c.query)
	}
	want := []string{
		"a/reader.go:4 ReadHeader: parses the MIME header block of a message",
		"b/writer.go:7 Flush: writes buffered bytes",
		"p/m.py:1 spool: Copy the data into a temporary spool file",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("candidates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if documented != 5 {
		t.Errorf("documented = %d, want 5 (tests left out)", documented)
	}
	for i, c := range cs {
		if c.heldOut != heldOut(c.target.path) {
			t.Errorf("candidate %d: half not by path", i)
		}
	}
	snap := stripped(files, cs)
	for _, f := range snap {
		for _, c := range cs {
			words := strings.Fields(c.query)
			if c.target.path == f.Path && bytes.Contains(f.Content, []byte(words[len(words)-1])) {
				t.Errorf("%s still holds its question's words: %q", f.Path, f.Content)
			}
		}
	}
	if py := string(snap[3].Content); strings.Contains(py, "spool file") || !strings.Contains(py, `""`) {
		t.Errorf("python docstring not blanked: %q", py)
	}
	if got, want := heldOut("net/http/server.go"), heldOut("net/http/server.go"); got != want {
		t.Error("heldOut is not stable")
	}
}

func TestJudge(t *testing.T) {
	it := item{relevant: []string{"a.go", "b.go"}}
	rank, ndcg := judge(it, []hitRef{{path: "x.go"}, {path: "b.go"}, {path: "a.go"}})
	// DCG = 1/log2(3) + 1/log2(4); ideal = 1 + 1/log2(3).
	if want := (0.6309297535714575 + 0.5) / (1 + 0.6309297535714575); rank != 2 || abs(ndcg-want) > 1e-9 {
		t.Errorf("judge = %d, %f; want 2, %f", rank, ndcg, want)
	}
	decl := item{relevant: []string{"a.go"}, target: target{path: "a.go", line: 30}}
	if rank, _ := judge(decl, []hitRef{{path: "a.go", start: 1, end: 20}, {path: "a.go", start: 25, end: 40}}); rank != 2 {
		t.Errorf("declaration rank = %d, want 2", rank)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestKeywordCountsMatchRg checks the baseline's in-process counts
// against `rg --count-matches --ignore-case --word-regexp` on a package of
// the Go tree.
func TestKeywordCountsMatchRg(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("no rg (make ripgrep installs it)")
	}
	dir := filepath.Join(goroot(), "src", "bufio")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("no Go source tree: %v", err)
	}
	var paths, texts []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			paths, texts = append(paths, e.Name()), append(texts, string(data))
		}
	}
	words := []string{"reader", "buffer", "err", "scan", "token", "utf8", "bufio"}
	kc := countWords(paths, texts, words)
	for _, w := range words {
		args := append([]string{"--no-config", "--count-matches", "--ignore-case", "--word-regexp", "--with-filename", "--null", "-e", w, "--"}, paths...)
		cmd := exec.Command("rg", args...)
		cmd.Dir = dir
		out, _ := cmd.Output() // exit 1: no match
		want := map[string]int{}
		for line := range strings.Lines(string(out)) {
			p, n, _ := strings.Cut(strings.TrimSpace(line), "\x00")
			want[p], _ = strconv.Atoi(n)
		}
		got := map[string]int{}
		for fi, n := range kc.counts[w] {
			got[paths[fi]] = n
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d files, rg says %d", w, len(got), len(want))
		}
		for p, n := range want {
			if got[p] != n {
				t.Errorf("%s in %s: %d, rg says %d", w, p, got[p], n)
			}
		}
	}
}
