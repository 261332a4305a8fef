package repo_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/testenv/fakesecret"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// secretFiles plant secrets, by name and by content, among ordinary files
// that merely mention them.
var secretFiles = map[string]string{
	"README.md":          "# Project\n\nKeys live in a vault, never in a -----BEGIN RSA PRIVATE KEY----- block here.\n",
	"crypto/pem.go":      "package crypto\n\n// Blocks of type \"RSA PRIVATE KEY\".\nconst header = \"-----BEGIN RSA PRIVATE KEY-----\"\n",
	"notes.txt":          "deploy notes\n\n" + fakesecret.PrivateKey(),
	"crypto/key_test.go": "package crypto\n\nvar key = `" + fakesecret.PrivateKey() + "`\n",
	"id_rsa":             fakesecret.PrivateKey(),
	".aws/credentials":   "[default]\naws_secret_access_key = hunter2\n",
	".netrc":             "machine example.com login me password hunter2\n",
}

// secretsByContent are the files of secretFiles refused for what they hold.
var secretsByContent = []string{"notes.txt", "crypto/key_test.go"}

// secretsByName are those refused for their path, with their rule.
var secretsByName = map[string]string{"id_rsa": "ssh-private-key", ".aws/credentials": "aws-credentials", ".netrc": "netrc"}

// zipOf is a snapshot of files as a push that left nothing out would
// have made it.
func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := zw.Create(name)
		if err == nil {
			_, err = io.WriteString(w, files[name])
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

// TestViewsRefuseSecrets: a file whose content holds a private key is not
// searchable, and reading it fails with PATH_NOT_ALLOWED naming the rule,
// whatever its name, on both views; files named as secrets are refused by
// every operation, their rule named; files that only mention a key stay
// readable and searchable.
func TestViewsRefuseSecrets(t *testing.T) {
	dir := repotest.WriteDir(t, secretFiles)
	local, err := repo.NewLocal(dir, repo.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	snap, err := repo.OpenZip(zipOf(t, secretFiles), "fixture", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []namedView{{name: "local", view: local}, {name: "zip", view: snap}} {
		t.Run(v.name, func(t *testing.T) {
			if got, want := searchPaths(t, v.view), []string{"README.md", "crypto/pem.go"}; !slices.Equal(got, want) {
				t.Errorf("searchable: %q, want %q", got, want)
			}
			if data, err := fs.ReadFile(v.view, "crypto/pem.go"); err != nil || string(data) != secretFiles["crypto/pem.go"] {
				t.Errorf("a file that names a key: %q, %v", data, err)
			}
			for _, name := range secretsByContent {
				if _, err := fs.Stat(v.view, name); err != nil {
					t.Errorf("Stat(%s): %v", name, err)
				}
				data, err := fs.ReadFile(v.view, name)
				refusedFor(t, "ReadFile", name, data, err, "holds a private key block (rule private-key)")
				f, err := v.view.Open(name)
				if err != nil {
					t.Fatalf("Open(%s): %v", name, err)
				}
				data, err = io.ReadAll(f)
				f.Close()
				refusedFor(t, "Open and read", name, data, err, "(rule private-key)")
			}
			for name, rule := range secretsByName {
				for op, err := range operations(v.view, name) {
					refusedFor(t, op, name, nil, err, "(rule "+rule)
				}
			}
		})
	}
}

// refusedFor checks that op on name failed with PATH_NOT_ALLOWED saying
// why, and passed on none of the key.
func refusedFor(t *testing.T, op, name string, data []byte, err error, why string) {
	t.Helper()
	pe, ok := errors.AsType[*fs.PathError](err)
	if !ok || toolerr.From(pe.Err).Code != toolerr.PathNotAllowed || !strings.Contains(err.Error(), why) {
		t.Errorf("%s(%s): %v, want a *fs.PathError with PATH_NOT_ALLOWED saying %q", op, name, err, why)
	}
	if bytes.Contains(data, []byte("PRIVATE KEY")) {
		t.Errorf("%s(%s) passed on the key: %q", op, name, data)
	}
}

// TestLocalFollowsSecrets: a file that comes to hold a key leaves the
// searchable files, and comes back once it no longer does.
func TestLocalFollowsSecrets(t *testing.T) {
	dir := repotest.WriteDir(t, map[string]string{"a.go": "package a\n", "b.go": "package b\n"})
	view, err := repo.NewLocal(dir, repo.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer view.Close()
	waitFor(t, view, has("b.go", "package b\n"))
	write(t, dir, "b.go", "package b\n\nvar k = `"+fakesecret.PrivateKey()+"`\n")
	if files := waitFor(t, view, lacks("b.go")); lacks("b.go")(files) != "" {
		t.Errorf("a file that came to hold a key is still searchable")
	}
	write(t, dir, "b.go", "package b // no key\n")
	if files := waitFor(t, view, has("b.go", "package b // no key\n")); has("b.go", "package b // no key\n")(files) != "" {
		t.Errorf("a file whose key was removed is not searchable again")
	}
}

// TestPackLeavesOutSecrets: a snapshot never carries a file whose content
// holds a key.
func TestPackLeavesOutSecrets(t *testing.T) {
	dir := repotest.WriteDir(t, secretFiles)
	var zipped bytes.Buffer
	paths := []string{"README.md", "crypto/pem.go", "notes.txt", "crypto/key_test.go"}
	st, err := repo.Pack(&zipped, dir, paths, repo.DefaultMaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"notes.txt (rule private-key)", "crypto/key_test.go (rule private-key)"}
	if !slices.Equal(st.Refused, want) || st.Files != 2 || st.Bytes != int64(len(secretFiles["README.md"])+len(secretFiles["crypto/pem.go"])) {
		t.Errorf("Pack: %+v, want 2 files and refused %q", st, want)
	}
	zr, err := zip.NewReader(bytes.NewReader(zipped.Bytes()), int64(zipped.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, []string{"README.md", "crypto/pem.go"}) {
		t.Errorf("the zip holds %q", names)
	}
}

// TestPackStreams: Pack streams each file to check it and to pack it,
// never holding one whole: packing a 32 MiB file and a 2 MiB file with a
// key at its end allocates a few buffers, not their size, and still
// leaves out the one with the key.
func TestPackStreams(t *testing.T) {
	const big = 32 << 20
	line := "a line of text, as a large generated file holds many of them\n"
	text := strings.Repeat(line, big/len(line))
	dir := repotest.WriteDir(t, map[string]string{
		"big.txt":    text,
		"keyed.txt":  text[:2<<20] + fakesecret.PrivateKey(),
		"README.md":  "# Big\n",
		"src/a.go":   "package a\n",
		"src/b.go":   "package b\n",
		"notes/x.md": "x\n",
	})
	paths := []string{"README.md", "big.txt", "keyed.txt", "notes/x.md", "src/a.go", "src/b.go"}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	st, err := repo.Pack(io.Discard, dir, paths, repo.DefaultMaxBytes)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"keyed.txt (rule private-key)"}; st.Files != 5 || !slices.Equal(st.Refused, want) {
		t.Errorf("Pack: %+v, want 5 files, keyed.txt refused", st)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > big/4 {
		t.Errorf("packing a %d MiB file allocated %d MiB: it was held whole", big>>20, allocated>>20)
	}
}
