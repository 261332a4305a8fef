package wiring_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/wiring"
)

// cursorsOf returns the cursor key of an Env over cfg and the variables
// in vars (its environment), or the error.
func cursorsOf(t *testing.T, cfg config.Config, vars map[string]string) (cursor.Key, error) {
	t.Helper()
	env := wiring.NewEnv(cfg, nil)
	env.Getenv = func(k string) string { return vars[k] }
	return env.Cursors()
}

// same reports whether a cursor made with a is accepted with b.
func same(a, b cursor.Key) bool {
	var n int
	return b.Scope("k", "t", "", struct{}{}).Decode(a.Scope("k", "t", "", struct{}{}).Encode(7), &n) == nil && n == 7
}

// TestCursorKey: where the paging cursors' key comes from. Deployed, the
// setting (one secret for every function), and never a key of the
// function's own; locally, a key generated once in the data directory
// (so cursors outlive a restart), or the process's own without one.
func TestCursorKey(t *testing.T) {
	secret := strings.Repeat("s", cursor.MinKeyLen)
	setting := map[string]string{wiring.CursorKey.Name(): secret}
	fromSetting, err := cursorsOf(t, config.Config{}, setting)
	if err != nil {
		t.Fatal(err)
	}
	lambda := map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001"}
	inLambda, err := cursorsOf(t, config.Config{DataDir: ".toolshed"}, map[string]string{"AWS_LAMBDA_RUNTIME_API": "x", wiring.CursorKey.Name(): secret})
	if err != nil || !same(fromSetting, inLambda) {
		t.Errorf("two functions given the same secret: %v, same %v", err, same(fromSetting, inLambda))
	}
	if _, err := cursorsOf(t, config.Config{DataDir: ".toolshed"}, lambda); err == nil || !strings.Contains(err.Error(), wiring.CursorKey.Name()) {
		t.Errorf("a Lambda function without the setting: %v, want an error naming it", err)
	}
	if _, err := cursorsOf(t, config.Config{}, map[string]string{wiring.CursorKey.Name(): "short"}); err == nil || !strings.Contains(err.Error(), wiring.CursorKey.Name()) {
		t.Errorf("a short key: %v, want an error naming the setting", err)
	}
	a, errA := cursorsOf(t, config.Config{}, nil)
	b, errB := cursorsOf(t, config.Config{}, nil)
	if errA != nil || errB != nil || same(a, b) {
		t.Errorf("two processes without a data directory: %v, %v, same %v; want keys of their own", errA, errB, same(a, b))
	}

	dir := filepath.Join(t.TempDir(), "data")
	first, err := cursorsOf(t, config.Config{DataDir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, "cursor.key"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v, %v; want it readable by its owner only", info, err)
	}
	restarted, err := cursorsOf(t, config.Config{DataDir: dir}, nil)
	if err != nil || !same(first, restarted) {
		t.Errorf("after a restart: %v, same %v", err, same(first, restarted))
	}
	if same(first, fromSetting) || same(first, a) {
		t.Error("the data directory's key is another's")
	}
}

// TestCursorKeyRace: processes that start together on one data directory
// end up with one key.
func TestCursorKeyRace(t *testing.T) {
	dir := t.TempDir()
	keys := make([]cursor.Key, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			var err error
			if keys[i], err = cursorsOf(t, config.Config{DataDir: dir}, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range keys[1:] {
		if !same(keys[0], keys[i+1]) {
			t.Errorf("process %d made another key", i+1)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".cursor-*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
