package repo_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestLocalReposApart: a repository inside another (or the same folder
// twice), however its path is spelled, is refused at start with both names:
// a key limited to the outer one would read the inner one through it.
func TestLocalReposApart(t *testing.T) {
	top := t.TempDir()
	nest := filepath.Join(top, "nest")
	for _, d := range []string{"nest/inner", "nest/innerly", "nest2", "elsewhere"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mustSymlink(t, filepath.Join(nest, "inner"), filepath.Join(top, "elsewhere", "link")) // a link into nest
	mustSymlink(t, "../nest", filepath.Join(top, "elsewhere", "nestlink"))
	tests := []struct {
		specs []string
		want  string // the start of the error; "" for none
	}{
		{[]string{"nest=" + nest, "inner=" + nest + "/inner"}, `repository "inner" (` + nest + `/inner) lies inside repository "nest" (` + nest + `)`},
		{[]string{"inner=" + nest + "/inner", "nest=" + nest}, `repository "inner" (` + nest + `/inner) lies inside repository "nest"`},
		{[]string{"nest=" + nest, "deep=" + nest + "/inner/../innerly/."}, `repository "deep" (` + nest + `/innerly) lies inside`},
		{[]string{"nest=" + nest, "linked=" + top + "/elsewhere/link"}, `repository "linked" (` + top + `/elsewhere/link) lies inside repository "nest"`},
		{[]string{"viaLink=" + top + "/elsewhere/nestlink", "inner=" + nest + "/inner"}, `repository "inner" (` + nest + `/inner) lies inside repository "viaLink"`},
		{[]string{"a=" + nest, "b=" + nest + "/"}, `repositories "a" (` + nest + `) and "b" (` + nest + `) are the same folder`},
		{[]string{"a=" + nest, "b=" + top + "/elsewhere/nestlink"}, `repositories "a" (` + nest + `) and "b"`},
		// Side by side, whatever their names share.
		{[]string{"inner=" + nest + "/inner", "innerly=" + nest + "/innerly", "nest2=" + top + "/nest2"}, ""},
		{[]string{"nest=" + nest, "nest2=" + top + "/nest2", "missing=" + nest + "2/x"}, ""},
	}
	for _, tt := range tests {
		_, err := repo.LocalRepos(tt.specs)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("LocalRepos(%q): %v", tt.specs, err)
		case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
			t.Errorf("LocalRepos(%q) = %v, want an error starting %s", tt.specs, err, tt.want)
		}
	}
}
