package symbols

import (
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/language"
)

// TestFormatNamesWhatParsingReads: the stored tables' format changes with
// what decides which parser reads a file, and with nothing else of the
// language table (a MIME type, a name, whether a language is code).
func TestFormatNamesWhatParsingReads(t *testing.T) {
	rules := func(change func(*language.Language)) string {
		rows := language.Table()
		change(&rows[1]) // typescript: it has a dialect
		var b strings.Builder
		parsingRules(&b, rows)
		return b.String()
	}
	base := rules(func(*language.Language) {})
	tests := []struct {
		name    string
		change  func(*language.Language)
		changes bool
	}{
		{"MIME type", func(l *language.Language) { l.MIMEType = "application/typescript" }, false},
		{"name", func(l *language.Language) { l.Name = "ts" }, false},
		{"code", func(l *language.Language) { l.Code = false }, false},
		{"extension", func(l *language.Language) { l.Extensions = []string{".ts", ".tsz"} }, true},
		{"file name", func(l *language.Language) { l.Files = []string{"Tsfile"} }, true},
		{"prefix", func(l *language.Language) { l.Prefixes = []string{"tsconfig."} }, true},
		{"parser", func(l *language.Language) { l.Parser = "javascript" }, true},
		{"dialect", func(l *language.Language) { l.Dialects = map[string]string{".tsx": "typescript"} }, true},
	}
	for _, tt := range tests {
		if got := rules(tt.change) != base; got != tt.changes {
			t.Errorf("a change of %s changes the format: %v, want %v", tt.name, got, tt.changes)
		}
	}
}
