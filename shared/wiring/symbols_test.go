package wiring_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/symbols"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/wiring"
)

// commitView is a view known by its commit only (as a snapshot is).
type commitView struct {
	repo.View
	commit string
}

func (v commitView) Commit() string { return v.commit }

// TestSymbolStores: a symbol table is saved where the view's code index
// is (the data directory's SymbolsDir, the bucket's SymbolsPrefix), one
// per view, and read back; nothing before it was saved is fs.ErrNotExist;
// without a data directory nothing is saved.
func TestSymbolStores(t *testing.T) {
	moto := emulator.StartMoto(t)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	data := t.TempDir()
	tests := []struct {
		name string
		cfg  config.Config
	}{
		{"local", config.Config{DataDir: data}},
		{"deployed", config.Config{Bucket: moto.NewBucket(t), S3Endpoint: moto.Endpoint}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			stores, err := wiring.NewEnv(tt.cfg, nil).SymbolStores(ctx)
			if err != nil {
				t.Fatal(err)
			}
			a, b := stores(commitView{commit: "c1"}), stores(commitView{commit: "c2"})
			if _, err := a.Load(ctx); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("nothing saved yet: %v", err)
			}
			if err := a.Save(ctx, []byte("table of c1")); err != nil {
				t.Fatal(err)
			}
			if got, err := a.Load(ctx); err != nil || string(got) != "table of c1" {
				t.Errorf("read back %q, %v", got, err)
			}
			if _, err := b.Load(ctx); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("another view's table: %v", err)
			}
			if stores(commitView{}) != nil {
				t.Error("a view without a key got a store")
			}
		})
	}
	if files, _ := filepath.Glob(filepath.Join(data, wiring.SymbolsDir, "*")); len(files) != 1 || !strings.HasPrefix(filepath.Base(files[0]), "commit-") {
		t.Errorf("local files %v, want one table named by its view's key", files)
	}
	if stores, err := wiring.NewEnv(config.Config{}, nil).SymbolStores(context.Background()); err != nil || stores != nil {
		t.Errorf("without a data directory: %v, %v", stores != nil, err)
	}
}

// TestSymbolStoresByRepository: two tenants that publish the same commit
// id get a stored symbol table each, in their repository's folder:
// neither reads nor overwrites the other's.
func TestSymbolStoresByRepository(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	s3 := repotest.StartS3(t)
	ctx := context.Background()
	src := s3.Source(repo.S3Options{})
	stores, err := wiring.NewEnv(config.Config{Bucket: s3.Bucket, S3Endpoint: s3.Moto.Endpoint}, nil).SymbolStores(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tenants := []string{"acme", "globex"}
	for _, tenant := range tenants {
		s3.Publish(t, tenant, "c1", repotest.WriteDir(t, map[string]string{tenant + ".go": "package " + tenant + "\n"}))
	}
	for _, tenant := range tenants {
		view, err := src.Open(ctx, reposcope.DefaultOf(tenant))
		if err != nil {
			t.Fatal(err)
		}
		st := stores(view)
		if got, err := st.Load(ctx); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s, before saving its table, reads %q (%v)", tenant, got, err)
		}
		if err := st.Save(ctx, []byte("table of "+tenant)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tenant := range tenants {
		objs, err := s3.Objects().List(ctx, wiring.SymbolsPrefix+tenant+"/")
		if err != nil || len(objs) != 1 {
			t.Fatalf("%s's stored tables: %+v, %v; want one", tenant, objs, err)
		}
		got, _, err := s3.Objects().Read(ctx, objs[0].Key, "", 1<<10)
		if err != nil || string(got) != "table of "+tenant {
			t.Errorf("%s: %s holds %q, %v", tenant, objs[0].Key, got, err)
		}
	}
}

// TestSymbolTablesCloseBeforeTheirViews: the process has one set of symbol
// tables; closing the Env closes them before the local views they follow,
// so a table saves the changes it took (a view done first would leave them
// unsaved): the next process parses nothing.
func TestSymbolTablesCloseBeforeTheirViews(t *testing.T) {
	ctx := context.Background()
	dir := repotest.WriteDir(t, map[string]string{"a.go": "package a\n\nfunc A() {}\n"})
	cfg := config.Config{Repos: []string{dir}, DataDir: t.TempDir()}
	start := func() (*wiring.Env, *symbols.Table) {
		env := wiring.NewEnv(cfg, nil)
		tables, err := env.SymbolTables(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := env.SymbolTables(ctx); again != tables {
			t.Error("a second caller got other tables")
		}
		src, _ := env.Repo(ctx)
		view, err := src.Open(ctx, reposcope.Ref{Tenant: "local", Name: src.Default()})
		if err != nil {
			t.Fatal(err)
		}
		table := tables.For(view)
		build, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		table.Build(build, 0)
		return env, table
	}
	env, table := start()
	if err := os.WriteFile(filepath.Join(dir, "b.go"), []byte("package a\n\nfunc B() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); table.Parses.Load() < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the table never took the new file")
		}
		table.Build(ctx, time.Second) // as a call would
	}
	env.Close()
	env, table = start()
	defer env.Close()
	if n := table.Parses.Load(); n != 0 {
		t.Errorf("the next process parsed %d files, want none: the change was not saved", n)
	}
}
