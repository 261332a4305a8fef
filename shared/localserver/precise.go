package localserver

import (
	"context"
	"os"
	"path/filepath"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/goscip"
	"github.com/toolshed/toolshed/shared/preciselocal"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/sciprun"
	"github.com/toolshed/toolshed/shared/wiring"
)

// PreciseDir is where the precise indexes live under the data directory.
const PreciseDir = "precise"

// keepPreciseIndexes starts keeping the precise indexes of the local
// repositories (shared/preciselocal), each once its symbol table is
// ready, in the data directory, with the binary's own subcommands (none
// in a server a test builds: then nothing is indexed); the Env answers the
// tools with them, and the server's status (/healthz) says how far they
// are. Snapshots from the bucket have the deployment's indexes instead.
func keepPreciseIndexes(ctx context.Context, env *wiring.Env) error {
	if env.Config.Bucket != "" {
		return nil
	}
	src, err := env.Repo(ctx)
	if err != nil {
		return err
	}
	local, ok := src.(repo.Shared)
	if !ok {
		return nil
	}
	tables, err := env.SymbolTables(ctx)
	if err != nil {
		return err
	}
	o := preciselocal.Options{Log: env.Log, Ready: func(ctx context.Context, v repo.View) { tables.For(v).Build(ctx, 0) }}
	if exe := env.Config.Executable; exe != "" {
		o.Runner.GoIndexer, o.Converter = []string{exe, goscip.CommandName}, []string{exe, preciselocal.ConvertName}
	}
	if o.Runner.NodeModules, err = nodeModules(env); err != nil {
		return err
	}
	if o.Limits, err = preciseLimits(env); err != nil {
		return err
	}
	if o.Quiet, err = config.PreciseQuiet.Get(env.Getenv); err != nil {
		return err
	}
	if env.Config.DataDir != "" {
		o.Dir = filepath.Join(env.Config.DataDir, PreciseDir)
	}
	k, err := preciselocal.New(o)
	if err != nil {
		return err
	}
	env.OnClose(func() error { k.Close(); return nil })
	env.ReportStatus("preciseIndexes", func(repos []string) any { return k.Status(repos) })
	env.KeepPreciseIndexes(k)
	k.Follow(local.Default(), local.View)
	for _, n := range local.Others {
		k.Follow(n.Name, n.View)
	}
	return nil
}

// nodeModules is the node_modules folder the npm indexers run from
// (TOOLSHED_NODE_MODULES, else the one beside this binary or above it);
// "" when none is found: each TypeScript and Python project then says
// what to install.
func nodeModules(env *wiring.Env) (string, error) {
	setting, err := config.NodeModules.Get(env.Getenv)
	if err != nil {
		return "", err
	}
	exe, err := os.Executable()
	if err != nil {
		return "", nil
	}
	dir, err := sciprun.NodeModules(setting, exe)
	if err != nil {
		env.Log.Info("precise: no node_modules for the TypeScript and Python indexers", "error", err)
		return "", nil
	}
	return dir, nil
}

// preciseLimits are the limits of each indexer run, from their settings.
func preciseLimits(env *wiring.Env) (sciprun.Limits, error) {
	t, err := config.PreciseTime.Get(env.Getenv)
	if err != nil {
		return sciprun.Limits{}, err
	}
	memory, err := config.PreciseMemoryMB.Get(env.Getenv)
	if err != nil {
		return sciprun.Limits{}, err
	}
	output, err := config.PreciseOutputMB.Get(env.Getenv)
	if err != nil {
		return sciprun.Limits{}, err
	}
	return sciprun.Limits{Time: t, MemoryBytes: int64(memory) << 20, OutputBytes: int64(output) << 20}, nil
}
