package navigate_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/precisetest"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/navigate"
)

// unlisted is a view whose searchable list is never ready in time, as a
// large snapshot's is not when a cold call comes (it decompresses every
// file first): its files are only read one by one.
type unlisted struct{ repo.View }

func (unlisted) Searchable(context.Context) ([]*repo.File, error) {
	return nil, errors.New("the searchable files are not read yet")
}

// TestPreciseWithoutTheList: precise answers read only the files they
// show, by the view's rules for each path, so they come without the
// view's whole list; the symbol table (made from that list) is not there,
// so no line claims an enclosing function. A file .gitignore hides and a
// denied one are never shown, though the index has them.
func TestPreciseWithoutTheList(t *testing.T) {
	dir := copyFixture(t, goModule, map[string]string{".gitignore": "api/\n"})
	repos := precisetest.Repos{"default": {indexOf(t, goModule)}}
	indexes := func(ctx context.Context, r reposcope.Ref, v repo.View, allowed []string) (*precise.Set, precise.State, error) {
		set, st, err := repos.Indexes(ctx, r, v, allowed)
		st.Unchanged = true // as the deployed reader says of a snapshot's own indexes
		return set, st, err
	}
	src := repotest.Local(t, dir)
	h := tooltest.New(t, tooltest.BoltStores(t), navigate.Tools(repo.Shared{View: unlisted{src.View}}, cursor.RandomKey(), indexes))

	def := call(t, h, navigate.FindDefinitionTool, pos("cmd/app/main.go", 16, 13))
	if def.Precision != "precise" || len(def.Definitions) != 1 || def.Definitions[0].at() != "store/store.go:17:15" {
		t.Errorf("find_definition: %s %q %+v", def.Precision, def.Reason, def.Definitions)
	}
	refs := call(t, h, navigate.FindReferencesTool, with(pos("cmd/app/main.go", 16, 13), "includeDeclaration", true))
	want := []string{"cmd/app/main.go:16 reference in -", "store/store.go:17 definition in -"}
	if got := refs.refLines(); refs.Precision != "precise" || !slices.Equal(got, want) {
		t.Errorf("find_references: %s %q %q, want %q", refs.Precision, refs.Reason, got, want)
	}
	callers := call(t, h, navigate.FindCallersTool, pos("store/store.go", 17, 15))
	if callers.Precision != "precise" || len(callers.Callers) != 1 || callers.Callers[0].Path != "cmd/app/main.go" {
		t.Errorf("find_callers: %s %q %+v", callers.Precision, callers.Reason, callers.Callers)
	}
	fails(t, h, navigate.FindDefinitionTool, pos("store/secrets.go", 6, 12), toolerr.PathNotAllowed)
	fails(t, h, navigate.FindDefinitionTool, pos("api/api.go", 13, 16), toolerr.InvalidInput)
}
