package navigate_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/navigate"
)

type reposPage struct {
	Repos []struct {
		Name    string `json:"name"`
		Default bool   `json:"default"`
		Files   int    `json:"files"`
		Index   struct {
			State string `json:"state"`
		} `json:"index"`
	} `json:"repos"`
	Total      int     `json:"total"`
	NextCursor *string `json:"next_cursor"`
}

// TestListReposPages: list_repos pages through every repository by name,
// each page saying how many there are and whether there is another.
func TestListReposPages(t *testing.T) {
	view := func(files map[string]string) repo.View { return repotest.Local(t, repotest.WriteDir(t, files)).View }
	src := repo.Shared{View: view(map[string]string{"a.go": "package a\n"}), Name: "main", Others: []repo.Named{
		{Name: "zeta", View: view(map[string]string{"z.go": "package z\n", "y.go": "package y\n"})},
		{Name: "alpha", View: view(map[string]string{"b.md": "# b\n"})},
	}}
	h := tooltest.New(t, tooltest.BoltStores(t), navigate.Tools(src, cursor.RandomKey(), nil))
	for _, limit := range []int{1, 2, 3, 50} {
		var names []string
		pages := 0
		for cursor := ""; ; pages++ {
			args := map[string]any{"limit": limit}
			if cursor != "" {
				args["cursor"] = cursor
			}
			raw, _ := json.Marshal(args)
			var page reposPage
			h.OK(t, tenant, navigate.ListReposTool, string(raw), &page)
			if page.Total != 3 || len(page.Repos) > limit {
				t.Fatalf("limit %d: %+v", limit, page)
			}
			for _, r := range page.Repos {
				names = append(names, r.Name)
				if r.Default != (r.Name == "main") || r.Files == 0 || r.Index.State != "none" {
					t.Errorf("limit %d: %+v", limit, r)
				}
			}
			if page.NextCursor == nil {
				break
			}
			cursor = *page.NextCursor
		}
		if got := strings.Join(names, ","); got != "alpha,main,zeta" || pages != (3+limit-1)/limit-1 {
			t.Errorf("limit %d: %s in %d pages", limit, got, pages+1)
		}
	}
	h.Fail(t, tenant, navigate.ListReposTool, `{"cursor":"bm90LWEtY3Vyc29y"}`, toolerr.InvalidInput)
}
