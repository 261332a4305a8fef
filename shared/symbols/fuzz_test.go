package symbols_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/symbols"
)

// FuzzParse: on any text, in any supported language, Parse returns
// symbols whose ranges, names, lines and parents fit the text (the seed
// corpus is the fixtures, run by go test).
func FuzzParse(f *testing.F) {
	fixtures, _ := filepath.Glob("testdata/fixtures/*")
	var names []string
	for _, fixture := range fixtures {
		text, err := os.ReadFile(fixture)
		if err != nil {
			f.Fatal(err)
		}
		names = append(names, filepath.Base(fixture))
		f.Add(uint8(len(names)-1), string(text))
	}
	f.Fuzz(func(t *testing.T, which uint8, text string) {
		name := names[int(which)%len(names)]
		file := symbols.Parse(name, text)
		if file == nil {
			return // not supported in this build
		}
		for i, s := range file.Symbols {
			if s.From < 0 || s.From > s.To || s.To > len(text) || s.DocFrom > s.DocTo || s.DocTo > len(text) {
				t.Fatalf("%s: symbol %d %+v: ranges outside the text (%d bytes)", name, i, s, len(text))
			}
			if s.Name == "" || !strings.HasPrefix(text[s.NameAt:], s.Name) {
				t.Fatalf("%s: symbol %d %+v: name not at %d", name, i, s, s.NameAt)
			}
			if s.Start < 1 || s.End < s.Start || s.Parent >= i || s.Parent < -1 {
				t.Fatalf("%s: symbol %d %+v: lines or parent wrong", name, i, s)
			}
			if i > 0 && file.Symbols[i-1].From > s.From {
				t.Fatalf("%s: symbol %d %+v starts before the one before it", name, i, s)
			}
			if s.Parent >= 0 && (file.Symbols[s.Parent].From > s.From || file.Symbols[s.Parent].To < s.To) {
				t.Fatalf("%s: symbol %d %+v is not inside its parent %+v", name, i, s, file.Symbols[s.Parent])
			}
			file.Signature(s)
			file.Doc(s)
		}
	})
}
