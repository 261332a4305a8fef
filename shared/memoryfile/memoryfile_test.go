package memoryfile

import (
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	if got := strings.Join(Names(), ","); got != "best_practices.md,decisions.jsonl,progress_log.jsonl" {
		t.Errorf("Names() = %s", got)
	}
	for _, f := range []string{"", "CLAUDE.md", ".claude/memory/decisions.jsonl", "Decisions.jsonl"} {
		if _, ok := FormatOf(f); ok {
			t.Errorf("FormatOf(%q) says it is a memory file", f)
		}
	}
	for name, want := range map[string]Format{ProgressLog: JSONLines, Decisions: JSONLines, BestPractices: Markdown} {
		if got, ok := FormatOf(name); !ok || got != want {
			t.Errorf("FormatOf(%s) = %d, %v; want %d", name, got, ok, want)
		}
	}
}
