package navigate

import (
	"strings"
	"testing"
)

// TestSymbolName reads the last name of SCIP symbols as the indexers
// write them.
func TestSymbolName(t *testing.T) {
	tests := []struct{ symbol, name string }{
		{"scip-go gomod example.com/nav v1 `example.com/nav/store`/Map#Get().", "Get"},
		{"scip-go gomod example.com/nav v1 `example.com/nav/store`/Getter#Get.", "Get"},
		{"scip-go gomod example.com/nav v1 `example.com/nav/store`/Map#", "Map"},
		{"scip-go gomod example.com/nav v1 `example.com/nav/store`/", "example.com/nav/store"},
		{"scip-go gomod github.com/golang/go/src go1.26.8 fmt/Sprint().", "Sprint"},
		{"scip-typescript npm shapes 1.0.0 src/`circle.ts`/Circle#`<constructor>`().", "<constructor>"},
		{"scip-typescript npm shapes 1.0.0 src/`main.ts`/totalArea().(shapes)", "shapes"},
		{"scip-typescript npm x 1 src/`a.ts`/f(+1).", "f"},
		{"scip-typescript npm x 1 src/`a.ts`/T#[U]", "U"},
		{"scip-python python zoo 0 `zoo.animals`/Dog#speak().", "speak"},
		{"a b c d `we``ird`.", "we`ird"},
		{"a b c d id:", "id"},
		{"a b c d m!", "m"},
		{"local 12 src/a.ts", ""},
		{"", ""},
		{"no suffix", ""},
		{").", ""},
		{"`.", ""},
	}
	for _, tt := range tests {
		if got := symbolName(tt.symbol); got != tt.name {
			t.Errorf("symbolName(%q) = %q, want %q", tt.symbol, got, tt.name)
		}
	}
	owners := map[string]string{
		"scip-go gomod example.com/nav v1 `example.com/nav/store`/Map#Get().":        "Map",
		"scip-go gomod example.com/nav v1 `example.com/nav/store`/Getter#Get.":       "Getter",
		"scip-go gomod example.com/nav v1 `example.com/nav/api`/Lookup().":           "example.com/nav/api",
		"scip-typescript npm shapes 1.0.0 src/`circle.ts`/Circle#`<constructor>`().": "Circle",
		"scip-typescript npm shapes 1.0.0 src/`main.ts`/totalArea().(shapes)":        "totalArea",
		"local 1 a.go": "",
	}
	for symbol, want := range owners {
		if got := ownerName(symbol); got != want {
			t.Errorf("ownerName(%q) = %q, want %q", symbol, got, want)
		}
	}
}

// FuzzSymbolName: symbols come from callers; reading one never panics and
// answers part of it.
func FuzzSymbolName(f *testing.F) {
	for _, s := range []string{"a b c d `x``y`#m(+2).", "``.", "`", "().", "local ", "a b c d [`]`]", "x#é."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, symbol string) {
		name := symbolName(symbol)
		if name != "" && !strings.Contains(symbol, name) && !strings.Contains(symbol, strings.ReplaceAll(name, "`", "``")) {
			t.Errorf("symbolName(%q) = %q, not in it", symbol, name)
		}
	})
}

// TestLines finds lines and the identifier at a column.
func TestLines(t *testing.T) {
	text := linesOf([]byte("package a\r\n\nfunc Alpha_2() {}\nx"))
	tests := []struct {
		line, col  int
		want, name string
	}{
		{1, 1, "package a", "package"},
		{1, 8, "package a", "package"}, // just after the name
		{1, 9, "package a", "a"},
		{2, 1, "", ""},
		{3, 6, "func Alpha_2() {}", "Alpha_2"},
		{3, 12, "func Alpha_2() {}", "Alpha_2"},
		{3, 13, "func Alpha_2() {}", "Alpha_2"},
		{3, 14, "func Alpha_2() {}", ""},
		{4, 1, "x", "x"},
	}
	for _, tt := range tests {
		start, end, ok := text.bounds(tt.line)
		if !ok || string(text.data[start:end]) != tt.want {
			t.Errorf("line %d: %q, %v; want %q", tt.line, text.data[start:end], ok, tt.want)
			continue
		}
		from, to := identifierAround(text.data[start:end], tt.col-1)
		if got := string(text.data[start:end][from:to]); got != tt.name {
			t.Errorf("line %d column %d: %q, want %q", tt.line, tt.col, got, tt.name)
		}
	}
	for _, n := range []int{0, 5, -1} {
		if _, _, ok := text.bounds(n); ok {
			t.Errorf("line %d found", n)
		}
	}
	if _, _, ok := linesOf([]byte("a\n")).bounds(2); ok {
		t.Error("a line after the final newline")
	}
}

// FuzzLines: any content, line and column (a caller's position) finds a
// line within the content and an identifier within the line, or none.
func FuzzLines(f *testing.F) {
	f.Add([]byte("a\nbc d\n"), 2, 3)
	f.Add([]byte(""), 1, 1)
	f.Add([]byte("\r\n\r"), 2, 0)
	f.Add([]byte("é9_x"), 1, 4)
	f.Fuzz(func(t *testing.T, data []byte, line, col int) {
		text := linesOf(data)
		start, end, ok := text.bounds(line)
		if !ok {
			return
		}
		if start < 0 || end < start || end > len(data) {
			t.Fatalf("line %d: [%d, %d) of %d bytes", line, start, end, len(data))
		}
		if col < 1 || col > end-start+1 {
			return // position refuses it
		}
		from, to := identifierAround(data[start:end], col-1)
		if from < 0 || to < from || to > end-start {
			t.Fatalf("identifier [%d, %d) of a line of %d bytes", from, to, end-start)
		}
	})
}
