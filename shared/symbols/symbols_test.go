package symbols_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/symbols"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from what Parse finds")

// TestFixtures pins the symbols and outline found in each fixture
// (testdata/fixtures, one or more per language) to its golden file
// (testdata/golden/<fixture>.golden; rewrite with -update).
func TestFixtures(t *testing.T) {
	fixtures, err := filepath.Glob("testdata/fixtures/*")
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, fixture := range fixtures {
		name := filepath.Base(fixture)
		t.Run(name, func(t *testing.T) {
			if !symbols.Supports(name) {
				t.Skipf("this build finds no symbols in %s (built without cgo: missing %v)", name, symbols.Missing())
			}
			text, err := os.ReadFile(fixture)
			if err != nil {
				t.Fatal(err)
			}
			got := outline(symbols.Parse(name, string(text)))
			golden := filepath.Join("testdata", "golden", name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("symbols of %s differ from %s (go test -update rewrites it):\n%s", name, golden, got)
			}
		})
	}
}

// outline renders a file's symbols one a line, indented by nesting:
// kind, name, container, lines, then the signature and the doc.
func outline(f *symbols.File) string {
	var b strings.Builder
	depth := make([]int, len(f.Symbols))
	for i, s := range f.Symbols {
		if s.Parent >= 0 {
			depth[i] = depth[s.Parent] + 1
		}
		in := ""
		if s.Container != "" {
			in = " in " + s.Container
		}
		fmt.Fprintf(&b, "%s%s %s%s %d-%d\n", strings.Repeat("  ", depth[i]), s.Kind, s.Name, in, s.Start, s.End)
		fmt.Fprintf(&b, "%s    | %s\n", strings.Repeat("  ", depth[i]), f.Signature(s))
		if doc := f.Doc(s); doc != "" {
			fmt.Fprintf(&b, "%s    # %s\n", strings.Repeat("  ", depth[i]), doc)
		}
	}
	return b.String()
}

// TestLanguageOfParse: a file is labelled with the language it is read as
// (a header read with the C++ grammar is cpp), and the languages the new
// grammars read (C#, Ruby, PHP, Kotlin) have symbols.
func TestLanguageOfParse(t *testing.T) {
	tests := []struct{ path, text, language, symbol string }{
		{"inc/stack.h", "class Stack {\n public:\n  void push(int x);\n};\n", "cpp", "Stack"},
		{"src/Main.kt", "class Main {\n    fun run() {}\n}\n", "kotlin", "run"},
		{"src/Program.cs", "class Program { static void Main() {} }\n", "csharp", "Main"},
		{"lib/user.rb", "class User\n  def name; end\nend\n", "ruby", "name"},
		{"src/User.php", "<?php\nclass User { function name() {} }\n", "php", "name"},
	}
	if missing := symbols.Missing(); len(missing) > 0 {
		t.Skipf("built without tree-sitter (cgo): missing %v", missing)
	}
	for _, tt := range tests {
		f := symbols.Parse(tt.path, tt.text)
		if f == nil {
			t.Errorf("%s: not read", tt.path)
			continue
		}
		if f.Language != tt.language {
			t.Errorf("%s: language %q, want %q", tt.path, f.Language, tt.language)
		}
		found := false
		for _, s := range f.Symbols {
			found = found || s.Name == tt.symbol
		}
		if !found {
			t.Errorf("%s: no symbol %s in %s", tt.path, tt.symbol, outline(f))
		}
	}
}
