package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/goscip"
	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/precisebucket/convert"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestMain lets the test binary stand in for the snapshot binary when
// push runs the Go emitter as its own index-go subcommand.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "index-go" {
		if err := goscip.Command(context.Background(), "snapshot index-go", os.Args[2:], os.Stdout, os.Stderr); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// preciseCheckout is a git checkout holding precise's Go fixture module
// in src/, a TypeScript project in web/ and a README.
func preciseCheckout(t *testing.T) string {
	t.Helper()
	dir := repotest.WriteDir(t, map[string]string{"README.md": "# shapes\n", "web/package.json": "{}\n", "web/a.ts": "export const a = 1\n"})
	if err := os.CopyFS(filepath.Join(dir, "src"), os.DirFS("../../shared/precise/testdata/fixture")); err != nil {
		t.Fatal(err)
	}
	gitRun(t, dir, "init", "-q")
	gitRun(t, dir, "add", ".")
	gitRun(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "first")
	return dir
}

// TestPushPrecise runs push's precise indexes against moto_server: the Go
// emitter's index of the module (the TypeScript project's indexer not
// installed, and said so), none with -index=false, and SCIP files made
// elsewhere with -scip, checked before anything is uploaded.
func TestPushPrecise(t *testing.T) {
	s3 := repotest.StartS3(t)
	ctx := context.Background()
	dir := preciseCheckout(t)
	commit := strings.TrimSpace(gitRun(t, dir, "rev-parse", "HEAD"))
	r := reposcope.DefaultOf("acme")
	cli := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := command(ctx, s3.Objects(), settings{MaxMB: 10, NodeModules: t.TempDir()}, args, &out, time.Now)
		return out.String(), err
	}
	pointer := func() repo.Pointer {
		p, _, err := repo.ReadPointer(ctx, s3.Objects(), r)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	out, err := cli("push", "-tenant", "acme", "-dir", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	p := pointer()
	if len(p.Precise) != 2 {
		t.Fatalf("the pointer names %+v\n%s", p.Precise, out)
	}
	goIndex, web := p.Precise[0], p.Precise[1]
	if goIndex.Root != "src" || goIndex.Language != "go" || goIndex.Indexer != "goscip" || goIndex.Key == "" || !strings.Contains(out, "precise: goscip indexed src (go)") {
		t.Errorf("the Go module's index: %+v\n%s", goIndex, out)
	}
	if web.Root != "web" || web.Key != "" || !web.Unavailable || !strings.Contains(web.Reason, "scip-typescript not installed: @sourcegraph/scip-typescript is not installed") {
		t.Errorf("the TypeScript project: %+v", web)
	}
	checkConverts(t, s3, r, p, 0, "src/cmd/app/main.go", "`example.com/fixture/shapes`/Square#")

	if out, err := cli("push", "-tenant", "acme", "-dir", dir, "-index=false"); err != nil || len(pointer().Precise) != 0 ||
		!strings.Contains(out, "no precise index was pushed") {
		t.Errorf("-index=false: %v, %+v\n%s", err, pointer().Precise, out)
	}

	// The same module's index made elsewhere, in the module's folder: its
	// metadata's root is src/.
	var scip bytes.Buffer
	if _, err := goscip.Emit(ctx, filepath.Join(dir, "src"), nil, &scip, goscip.Options{ModuleVersion: commit}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "ci.scip")
	os.WriteFile(file, scip.Bytes(), 0o600)
	out, err = cli("push", "-tenant", "acme", "-dir", dir, "-index=false", "-scip", file)
	want := []repo.PreciseIndex{{Root: "src", Languages: []string{"go"}, Indexer: repo.Uploaded}}
	got := pointer().Precise
	if len(got) == 1 {
		want[0].Key, want[0].SHA256, want[0].Bytes = got[0].Key, got[0].SHA256, int64(scip.Len())
	}
	if err != nil || !reflect.DeepEqual(got, want) || !strings.Contains(out, "precise: checked "+file+": 3 documents of the snapshot under src") {
		t.Errorf("-scip: %v, %+v, want %+v\n%s", err, got, want, out)
	}
	checkConverts(t, s3, r, pointer(), 0, "src/render/render.go", "`example.com/fixture/shapes`/Shape#")
	testRefusedUploads(t, cli, pointer, dir)
}

// testRefusedUploads: a -scip file that is not SCIP, is too large or
// names no file of the snapshot fails the push, which moves nothing.
func testRefusedUploads(t *testing.T, cli func(...string) (string, error), pointer func() repo.Pointer, dir string) {
	before := pointer()
	huge := binary.AppendUvarint([]byte{0x12}, 20<<20) // a document of 20 MB, over -max-mb 10
	var scip bytes.Buffer
	if _, err := goscip.Emit(context.Background(), filepath.Join(dir, "src"), nil, &scip, goscip.Options{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		content []byte
		why     string
	}{
		{"text", []byte("hello"), "not a SCIP index"},
		{"huge", huge, "SCIP index too large"},
		// Made in src/, without the metadata that says so: its paths
		// are not the repository's.
		{"elsewhere", stripMetadata(t, scip.Bytes()), "none of its 3 documents is a file of the snapshot"},
	}
	for _, tt := range tests {
		file := filepath.Join(t.TempDir(), tt.name+".scip")
		os.WriteFile(file, tt.content, 0o600)
		out, err := cli("push", "-tenant", "acme", "-dir", dir, "-index=false", "-scip", file)
		if err == nil || !strings.Contains(err.Error(), "-scip "+file+": ") || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("%s: %v, want the push refused saying %q\n%s", tt.name, err, tt.why, out)
		}
		if p := pointer(); p.Seq != before.Seq {
			t.Errorf("%s: the pointer moved", tt.name)
		}
	}
}

// stripMetadata returns a SCIP index without its metadata (where its
// project root is).
func stripMetadata(t *testing.T, scip []byte) []byte {
	t.Helper()
	if len(scip) == 0 || scip[0] != 1<<3|2 {
		t.Fatal("the index does not start with its metadata")
	}
	n, k := binary.Uvarint(scip[1:])
	return scip[1+k+int(n):]
}

// checkConverts converts p.Precise[i] as the indexer does, against the
// snapshot as the S3 source serves it, and finds a reference to the
// fixture's symbol (its descriptors) in path.
func checkConverts(t *testing.T, s3 *repotest.S3, r reposcope.Ref, p repo.Pointer, i int, path, descriptors string) {
	t.Helper()
	if i >= len(p.Precise) {
		t.Fatalf("the pointer names %d precise indexes", len(p.Precise))
	}
	ctx := context.Background()
	view, err := repo.NewS3(s3.Objects(), repo.S3Options{}).Open(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	scip, _, err := s3.Objects().Read(ctx, p.Precise[i].Key, "", 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	var store bytes.Buffer
	st, err := convert.Build(ctx, view, p.Precise[i], bytes.NewReader(scip), &store, convert.Options{Commit: p.Commit, Tenant: r.Tenant, TempDir: t.TempDir()})
	if err != nil || st.Documents == 0 || st.Skipped != 0 {
		t.Fatalf("converting %s: %+v, %v", p.Precise[i].Key, st, err)
	}
	ix, err := precise.Open(ctx, bytes.NewReader(store.Bytes()), int64(store.Len()))
	if err != nil {
		t.Fatal(err)
	}
	symbol := "scip-go gomod example.com/fixture " + p.Commit + " " + descriptors
	refs, _, err := ix.References(ctx, symbol, precise.Location{}, 100)
	if err != nil || !slices.ContainsFunc(refs, func(o precise.Occurrence) bool { return o.Path == path }) {
		t.Errorf("%s's references: %+v, %v; want one in %s", symbol, refs, err, path)
	}
}
