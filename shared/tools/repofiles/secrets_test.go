package repofiles_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/testenv/fakesecret"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/repofiles"
)

// TestRangesOfRefusedFiles: a range of a file refused for its content is
// refused too, whichever lines it asks for (before the key, or a page cut
// at 1 MB long before it), and the answer holds no byte of the file, in a
// local view and in a snapshot that holds the file (one pushed before the
// push left such files out).
func TestRangesOfRefusedFiles(t *testing.T) {
	key := fakesecret.PrivateKey()
	files := map[string]string{
		"README.md": "# R\n",
		// The key from line 3.
		"notes.txt": "deploy notes\n\n" + key,
		// 2 MB of lines, then the key.
		"big.txt": strings.Repeat("a line of text before the key\n", 70_000) + key,
	}
	snap, err := repo.OpenZip(unfilteredZip(t, files), "fixture", nil)
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]repo.Source{
		"local": repotest.Local(t, repotest.WriteDir(t, files)),
		"zip":   repo.Shared{View: snap},
	}
	for name, src := range sources {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, src)
			for _, args := range []string{
				`{"path":"notes.txt","startLine":1,"endLine":1}`,
				`{"path":"notes.txt","startLine":2,"endLine":2}`,
				`{"path":"big.txt","startLine":1,"endLine":1}`,
				`{"path":"big.txt","startLine":2}`, // a page cut at 1 MB
				`{"path":"big.txt","startLine":69000,"endLine":69001}`,
			} {
				o := e.Call(alice, repofiles.ReadFileTool, args)
				out, _ := json.Marshal(o)
				switch {
				case o.OK || o.Error.Code != toolerr.PathNotAllowed || !strings.Contains(o.Error.Message, "(rule private-key)"):
					t.Errorf("%s: %.300s, want PATH_NOT_ALLOWED naming rule private-key", args, out)
				case bytes.Contains(out, []byte("deploy notes")) || bytes.Contains(out, []byte("a line of text")) ||
					bytes.Contains(out, []byte("PRIVATE KEY")) || bytes.Contains(out, []byte(strings.Split(key, "\n")[1])):
					t.Errorf("%s: the answer holds some of the file: %.300s", args, out)
				}
			}
			var ok readFileResult
			e.OK(t, alice, repofiles.ReadFileTool, `{"path":"README.md","startLine":1,"endLine":1}`, &ok)
			if ok.File.Content != "# R\n" {
				t.Errorf("README.md line 1: %q", ok.File.Content)
			}
		})
	}
}

// unfilteredZip is a snapshot of files as a push that left nothing out
// would have made it.
func unfilteredZip(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := zw.Create(name)
		if err == nil {
			_, err = fmt.Fprint(w, files[name])
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
