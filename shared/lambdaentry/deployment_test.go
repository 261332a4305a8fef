package lambdaentry_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/testenv/deploytest"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
)

// bootstrapDir holds the functions' bootstraps, built for the host by
// TestMain as `make build` builds them for Lambda (version testVersion):
// tool, gateway, authorizer, indexer.
var bootstrapDir string

// testVersion is the version the bootstraps are built with, as make sets it.
const testVersion = "v0.0.0-test"

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "toolshed-bootstraps-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := deploytest.BuildBootstraps(dir, testVersion); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bootstrapDir = dir
	return m.Run()
}

// deployment is the stand-in for the deployed stack the tests run the
// bootstraps on (see deploytest).
type deployment = deploytest.Stack

// newDeployment starts the emulators; everything stops when tb ends.
func newDeployment(tb testing.TB) *deployment {
	tb.Helper()
	return deploytest.New(tb, bootstrapDir)
}

// keys creates two keys of tenant acme in the API keys table: good, and
// revoked (named "old").
func keys(tb testing.TB, d *deployment) (good, revoked string) {
	tb.Helper()
	ctx := context.Background()
	good, _, err := auth.Create(ctx, d.Stores.APIKeys, "acme", "ci", time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	revoked, rec, err := auth.Create(ctx, d.Stores.APIKeys, "acme", "old", time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := d.Stores.APIKeys.Revoke(ctx, rec.Hash, time.Now()); err != nil {
		tb.Fatal(err)
	}
	return good, revoked
}

// invoke runs one invocation and fails the test if it cannot.
func invoke(tb testing.TB, fn *lambdatest.Function, event []byte) lambdatest.Response {
	tb.Helper()
	return deploytest.Invoke(tb, fn, event)
}

// directEvent is the gateway's direct invocation of a tool.
func directEvent(tool, args, tenant, requestID string) []byte {
	return deploytest.DirectEvent(tool, args, tenant, requestID)
}
