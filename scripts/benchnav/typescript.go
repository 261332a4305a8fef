package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolshed/toolshed/scripts/benchnav/navcheck"
)

// typeScript compares the precise answers (the store's, then the tools')
// on rxjs (its src/ and
// tsconfig.json, copied to work: scip-typescript reads a project outside
// node_modules) with the TypeScript language service's.
func typeScript(ctx context.Context, tb testing.TB, o preciseOptions, work string) error {
	rxjs, err := filepath.Abs(o.rxjs)
	if err != nil {
		return err
	}
	dir := filepath.Join(work, "project")
	if err := os.CopyFS(filepath.Join(dir, "src"), os.DirFS(filepath.Join(rxjs, "src"))); err != nil {
		return err
	}
	for _, f := range []string{"tsconfig.json", "package.json"} {
		data, err := os.ReadFile(filepath.Join(rxjs, f))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, f), data, 0o644)
		}
		if err != nil {
			return err
		}
	}
	nodeModules := filepath.Dir(rxjs)
	c, run, err := navcheck.IndexTS(ctx, nodeModules, dir, work)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Printf("\nrxjs: scip-typescript %.1f s, peak %d MB, %d KB of SCIP; converted in %.2f s to %d KB\n", run.Duration.Seconds(),
		run.PeakRSS>>20, run.OutputBytes>>10, c.Took.Seconds(), c.Bytes>>10)
	store, err := navcheck.NewStore(c)
	if err != nil {
		return err
	}
	truth, err := navcheck.TSTruth(ctx, o.node, filepath.Join(nodeModules, "typescript"), dir, o.sample)
	if err != nil {
		return err
	}
	r, err := compareWarm(ctx, truth, store)
	if err != nil {
		return err
	}
	report("rxjs vs the TypeScript language service, the store", truth, r, truth)
	tools := navcheck.Serve(tb, dir, c.Served("typescript", "scip-typescript"))
	if r, err = compareWarm(ctx, truth, tools); err != nil {
		return err
	}
	report("rxjs vs the TypeScript language service, the tools", truth, r, truth)
	searched(tools)
	return nil
}
