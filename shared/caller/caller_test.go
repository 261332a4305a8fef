package caller_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolshed/toolshed/shared/caller"
)

func TestToolFiltersAddUp(t *testing.T) {
	errHidden, errScope := errors.New("hidden"), errors.New("scope")
	ctx := context.Background()
	if err := caller.CheckTool(ctx, "any"); err != nil {
		t.Fatalf("no filter: %v", err)
	}
	ctx = caller.WithToolFilter(ctx, func(tool string) error {
		if tool == "grep_codebase" || tool == "add_task" {
			return nil
		}
		return errHidden
	})
	ctx = caller.WithToolFilter(ctx, func(tool string) error {
		if tool == "add_task" {
			return errScope
		}
		return nil
	})
	for tool, want := range map[string]error{"grep_codebase": nil, "add_task": errScope, "hello": errHidden} {
		if got := caller.CheckTool(ctx, tool); got != want {
			t.Errorf("%s: %v, want %v", tool, got, want)
		}
	}
}
