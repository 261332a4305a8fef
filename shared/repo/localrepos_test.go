package repo_test

import (
	"fmt"
	"testing"

	"github.com/toolshed/toolshed/shared/repo"
)

// TestLocalRepos: the local server's -repo flags, name=path or a path
// named after its folder, the first the default; without any, the
// repository directory alone.
func TestLocalRepos(t *testing.T) {
	tests := []struct {
		specs []string
		dir   string
		want  string // the repositories, or the start of the error
	}{
		{nil, "/src/myapp", "[{myapp /src/myapp}]"},
		{nil, "/src/my app", "[{default /src/my app}]"}, // not a name: the default one
		{[]string{"/src/api"}, ".", "[{api /src/api}]"},
		{[]string{"web=/src/site", "/src/api"}, ".", "[{web /src/site} {api /src/api}]"},
		{[]string{"/src/a=b"}, ".", `repository "/src/a=b": invalid repository name`}, // a path holding "=", whose folder cannot be a name
		{[]string{"api=/src/x", "api=/src/y"}, ".", `two repositories are named "api"`},
		{[]string{"/src/api", "/other/api"}, ".", `two repositories are named "api"`},
		{[]string{"/src/my app"}, ".", `repository "/src/my app": invalid repository name`},
	}
	for _, tt := range tests {
		got, err := repo.LocalRepos(tt.specs, tt.dir)
		out := fmt.Sprint(got)
		if err != nil {
			out = err.Error()[:min(len(err.Error()), len(tt.want))]
		}
		if out != tt.want {
			t.Errorf("LocalRepos(%q, %q) = %s, want %s", tt.specs, tt.dir, out, tt.want)
		}
	}
}
