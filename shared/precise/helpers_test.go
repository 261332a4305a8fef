package precise_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sourcegraph/scip/bindings/go/scip"
	"google.golang.org/protobuf/proto"

	"github.com/toolshed/toolshed/shared/precise"
	"github.com/toolshed/toolshed/shared/precise/fromscip"
)

// tools is where scip-go is built, once per package run.
var tools string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "precise-tools-")
	if err != nil {
		panic(err)
	}
	tools = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// scipGo builds scip-go (the version go.mod's tool directive pins).
var scipGo = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(tools, "scip-go")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/sourcegraph/scip-go/cmd/scip-go").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%v\n%s", err, out)
	}
	return bin, nil
})

// indexGo runs scip-go on the Go module at dir and returns its SCIP.
func indexGo(t testing.TB, dir string) []byte {
	t.Helper()
	bin, err := scipGo()
	if err != nil {
		t.Fatalf("building scip-go: %v", err)
	}
	out := filepath.Join(t.TempDir(), "index.scip")
	cmd := exec.Command(bin, "-q", "--module-version=v1.0.0", "-o", out)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scip-go: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fixtureSCIP is scip-go's index of testdata/fixture, made once.
var fixtureSCIP struct {
	once sync.Once
	data []byte
}

func fixture(t testing.TB) []byte {
	t.Helper()
	fixtureSCIP.once.Do(func() { fixtureSCIP.data = indexGo(t, "testdata/fixture") })
	if fixtureSCIP.data == nil {
		t.Fatal("the fixture could not be indexed")
	}
	return fixtureSCIP.data
}

// build converts SCIP into a store.
func build(t testing.TB, data []byte, o fromscip.Options) []byte {
	t.Helper()
	if o.TempDir == "" {
		o.TempDir = t.TempDir()
	}
	var out bytes.Buffer
	if _, err := fromscip.Build(context.Background(), bytes.NewReader(data), &out, o); err != nil {
		t.Fatalf("build: %v", err)
	}
	return out.Bytes()
}

// open opens a store held in memory.
func open(t testing.TB, store []byte) *precise.Index {
	t.Helper()
	ix, err := precise.Open(context.Background(), bytes.NewReader(store), int64(len(store)))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return ix
}

// index builds and opens the store of a SCIP index made in Go.
func index(t testing.TB, x *scip.Index, o fromscip.Options) *precise.Index {
	t.Helper()
	return open(t, build(t, marshal(t, x), o))
}

func marshal(t testing.TB, x *scip.Index) []byte {
	t.Helper()
	data, err := proto.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// goDoc is a Go document of SCIP occurrences.
func goDoc(path string, occs ...*scip.Occurrence) *scip.Document {
	return &scip.Document{RelativePath: path, Language: "go", Occurrences: occs}
}

func occ(sym string, roles int32, rng ...int32) *scip.Occurrence {
	return &scip.Occurrence{Range: rng, Symbol: sym, SymbolRoles: roles}
}

func meta(tool string) *scip.Metadata {
	return &scip.Metadata{ToolInfo: &scip.ToolInfo{Name: tool, Version: "1"}, TextDocumentEncoding: scip.TextEncoding_UTF8}
}
