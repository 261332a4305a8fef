package sciprun

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolshed/toolshed/shared/repo"
)

// softShare is the share of the memory limit a garbage collector is told
// to stay under (node's --max-old-space-size, GOMEMLIMIT), so that it
// collects harder, and fails with a message saying so, before the hard
// limit kills the process without one.
const softShare = 0.75

// executable returns the start of p's indexer's command line: the Go
// indexer's, or node running the npm indexer's script. Its error says what
// is not installed.
func (r Runner) executable(p Project, l Limits) ([]string, error) {
	switch p.Language {
	case Go:
		if len(r.GoIndexer) == 0 {
			return nil, errors.New("no Go indexer command was given (the binary's index-go subcommand)")
		}
		return slices.Clone(r.GoIndexer), nil
	case TypeScript:
		return r.nodeCommand("scip-typescript", "dist/src/main.js", l)
	case Python:
		return r.nodeCommand("scip-python", "index.js", l)
	}
	return nil, fmt.Errorf("no indexer reads %q projects", p.Language)
}

// arguments returns the indexer's whole command line (exe and its
// arguments) and environment for the project p at dir, writing out; tmp is
// the run's scratch folder.
func arguments(p Project, exe []string, dir, out, tmp string, l Limits) (argv, env []string, err error) {
	env, err = environment(tmp)
	if err != nil {
		return nil, nil, err
	}
	switch p.Language {
	case Go:
		return append(append(exe, "-o", out, dir), p.Packages...), append(env, goEnvironment(l)...), nil
	case TypeScript:
		argv, err = typescriptArguments(p, exe, dir, out, tmp)
	default:
		argv, err = pythonArguments(p, exe, dir, out, tmp)
	}
	return argv, env, err
}

// typescriptArguments returns scip-typescript's command line. A project
// without a tsconfig.json is read through a configuration written in the
// scratch folder: scip-typescript's own --infer-tsconfig would write one
// into the repository.
func typescriptArguments(p Project, exe []string, dir, out, tmp string) ([]string, error) {
	argv := append(exe, "index", "--cwd", dir, "--output", out, "--no-progress-bar")
	switch p.Config {
	case "tsconfig.json":
		return argv, nil // scip-typescript reads dir/tsconfig.json
	case "jsconfig.json":
		return append(argv, filepath.Join(dir, p.Config)), nil
	}
	config, err := writeTSConfig(p, dir, tmp)
	return append(argv, config), err
}

// writeTSConfig writes, in tmp, the TypeScript configuration of a project
// that has none: every TypeScript and JavaScript file it covers (what
// --infer-tsconfig takes, less the folders and nested projects that are
// not this project's), type-checked as far as it goes without its
// packages installed.
func writeTSConfig(p Project, dir, tmp string) (string, error) {
	var exclude []string
	for _, name := range append(slices.Clone(repo.ExcludedDirs), skippedDirs...) {
		exclude = append(exclude, dir+"/**/"+name)
	}
	exclude = append(exclude, dir+"/**/.*")
	for _, n := range p.Nested {
		rel, _ := strings.CutPrefix(n, p.Root+"/")
		exclude = append(exclude, filepath.Join(dir, filepath.FromSlash(rel)))
	}
	config := map[string]any{
		"compilerOptions": map[string]any{"allowJs": true, "noEmit": true, "skipLibCheck": true,
			"typeRoots": []string{filepath.Join(dir, "node_modules", "@types")}},
		"include": []string{dir + "/**/*"},
		"exclude": exclude,
	}
	data, err := json.Marshal(config)
	if err != nil {
		return "", err
	}
	name := filepath.Join(tmp, "tsconfig.json")
	return name, os.WriteFile(name, data, 0o600)
}

// pythonArguments returns scip-python's command line. It is given an
// empty environment (no installed packages), so that it never runs pip.
func pythonArguments(p Project, exe []string, dir, out, tmp string) ([]string, error) {
	environment := filepath.Join(tmp, "environment.json")
	if err := os.WriteFile(environment, []byte("[]"), 0o600); err != nil {
		return nil, err
	}
	name, version := p.Name, p.Version
	if name == "" {
		name = filepath.Base(dir)
	}
	if version == "" {
		version = "0"
	}
	return append(exe, "index", "--project-name", name, "--project-version", version,
		"--cwd", dir, "--output", out, "--quiet", "--environment", environment), nil
}

// nodeCommand returns the command line running script of the npm package
// @sourcegraph/pkg with node, V8's heap held under the memory limit.
func (r Runner) nodeCommand(pkg, script string, l Limits) ([]string, error) {
	if r.NodeModules == "" {
		return nil, fmt.Errorf("@sourcegraph/%s: no node_modules folder was found: run `npm ci` in the Toolshed checkout, or set TOOLSHED_NODE_MODULES", pkg)
	}
	main := filepath.Join(r.NodeModules, "@sourcegraph", pkg, filepath.FromSlash(script))
	if _, err := os.Stat(main); err != nil {
		return nil, fmt.Errorf("@sourcegraph/%s is not installed in %s: run `npm ci` in the Toolshed checkout", pkg, r.NodeModules)
	}
	node := r.Node
	if node == "" {
		node = "node"
	}
	node, err := exec.LookPath(node)
	if err != nil {
		return nil, fmt.Errorf("node is not installed (%w): install Node.js 20 or later to index with %s", err, pkg)
	}
	heapMB := int64(float64(l.MemoryBytes)*softShare) >> 20
	return []string{node, fmt.Sprintf("--max-old-space-size=%d", heapMB), main}, nil
}

// NodeModules returns the node_modules folder the npm indexers run from:
// setting (TOOLSHED_NODE_MODULES) when set, else the first node_modules
// holding @sourcegraph/scip-typescript in the folder of the executable exe
// or a folder above it (a checkout's build/local/toolshed finds the
// checkout's). Never the working directory's: the local server may start
// in the repository it serves, whose packages are that repository's code.
func NodeModules(setting, exe string) (string, error) {
	if setting != "" {
		return filepath.Abs(setting)
	}
	exe, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return "", fmt.Errorf("sciprun: find node_modules: %w", err)
	}
	for dir := filepath.Dir(exe); ; dir = filepath.Dir(dir) {
		candidate := filepath.Join(dir, "node_modules")
		if _, err := os.Stat(filepath.Join(candidate, "@sourcegraph", "scip-typescript", "package.json")); err == nil {
			return candidate, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("sciprun: no node_modules holding @sourcegraph/scip-typescript above %s: run `npm ci` in the Toolshed checkout, or set TOOLSHED_NODE_MODULES", exe)
		}
	}
}
