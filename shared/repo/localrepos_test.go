package repo_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolshed/toolshed/shared/repo"
)

// TestLocalRepos: the local repositories (TOOLSHED_REPO_DIR or the -repo
// flags), name=path or a path named after its folder, the first the
// default; without any, the working directory.
func TestLocalRepos(t *testing.T) {
	tests := []struct {
		specs []string
		want  string // the repositories, or the start of the error
	}{
		{nil, "[{myapp .}]"}, // the working directory, .../myapp
		{[]string{"/src/myapp"}, "[{myapp /src/myapp}]"},
		{[]string{"/src/my app"}, "[{default /src/my app}]"}, // one, not a name: the default one
		{[]string{"/src/a=b"}, "[{default /src/a=b}]"},       // a path holding "=", whose folder cannot be a name
		{[]string{"web=/src/site", "/src/api"}, "[{web /src/site} {api /src/api}]"},
		{[]string{"/src/api", "/src/my app"}, `repository "/src/my app": invalid repository name`},
		{[]string{"api=/src/x", "api=/src/y"}, `two repositories are named "api"`},
		{[]string{"/src/api", "/other/api"}, `two repositories are named "api"`},
		// "default" means the default repository: only the first may bear it.
		{[]string{"default=/src/x", "/src/api"}, "[{default /src/x} {api /src/api}]"},
		{[]string{"/src/api", "default=/src/x"}, `repository "default=/src/x": "default" means the default repository`},
		{[]string{"/src/api", "/src/default"}, `repository "/src/default": "default" means the default repository`},
	}
	wd := filepath.Join(t.TempDir(), "myapp")
	if err := os.Mkdir(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(wd)
	for _, tt := range tests {
		got, err := repo.LocalRepos(tt.specs)
		out := fmt.Sprint(got)
		if err != nil {
			out = err.Error()[:min(len(err.Error()), len(tt.want))]
		}
		if out != tt.want {
			t.Errorf("LocalRepos(%q) = %s, want %s", tt.specs, out, tt.want)
		}
	}
}
