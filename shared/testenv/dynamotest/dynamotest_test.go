package dynamotest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolshed/toolshed/shared/testenv/dynamotest"
)

func TestRepoRoot(t *testing.T) {
	root, err := dynamotest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"go.mod", "package.json"} {
		if _, err := os.Stat(filepath.Join(root, name)); err != nil {
			t.Errorf("repo root %s has no %s: %v", root, name, err)
		}
	}
}

func TestUniqueTables(t *testing.T) {
	a, b := dynamotest.UniqueTables(), dynamotest.UniqueTables()
	if a == b {
		t.Fatalf("two calls gave the same tables %+v", a)
	}
}

func TestStartServesStores(t *testing.T) {
	srv := dynamotest.Start(t)
	stores := srv.Stores(t)
	if _, err := stores.APIKeys.List(t.Context()); err != nil {
		t.Fatalf("list api keys on fresh tables: %v", err)
	}
}
