package repo_test

import (
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/repo"
)

// keyView is a view with a commit and, when dir is set, a directory.
type keyView struct {
	repo.View
	commit string
}

func (v keyView) Commit() string { return v.commit }

type dirView struct {
	keyView
	dir string
}

func (v dirView) Dir() string { return v.dir }

func TestKey(t *testing.T) {
	tests := []struct {
		name string
		view repo.View
		want string // prefix; "" for no key
	}{
		{"a directory, by its path", dirView{keyView{commit: "c1"}, "/src/app"}, "local-"},
		{"a snapshot, by its commit", keyView{commit: "c1"}, "commit-"},
		{"neither", keyView{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := repo.Key(tt.view)
			if tt.want == "" && got != "" || !strings.HasPrefix(got, tt.want) || tt.want != "" && len(got) != len(tt.want)+12 {
				t.Errorf("Key = %q, want %q and 12 hex digits", got, tt.want)
			}
		})
	}
	if repo.Key(dirView{dir: "/a"}) == repo.Key(dirView{dir: "/b"}) || repo.Key(keyView{commit: "c1"}) == repo.Key(keyView{commit: "c2"}) {
		t.Error("two views got one key")
	}
	if repo.Key(dirView{dir: "/a"}) != repo.Key(dirView{keyView{commit: "other"}, "/a"}) {
		t.Error("a directory's key changed with its commit")
	}
}
