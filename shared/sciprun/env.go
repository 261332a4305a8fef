package sciprun

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// environment returns an indexer's environment: nothing of this process's
// but PATH (its absolute folders only: a relative one would find programs
// in the indexed repository), with HOME, the temporary folder and the
// caches in the run's scratch folder tmp, and npm told never to run a
// package's scripts. No AWS_*, TOOLSHED_* or token variable reaches it,
// nor NODE_OPTIONS (which could load code into node).
func environment(tmp string) ([]string, error) {
	dirs := map[string]string{"HOME": "home", "TMPDIR": "tmp", "XDG_CACHE_HOME": "cache", "XDG_CONFIG_HOME": "config"}
	env := []string{"PATH=" + absolutePath(os.Getenv("PATH")), "npm_config_ignore_scripts=true"}
	for name, sub := range dirs {
		dir := filepath.Join(tmp, sub)
		if err := os.Mkdir(dir, 0o700); err != nil {
			return nil, fmt.Errorf("sciprun: scratch folder: %w", err)
		}
		env = append(env, name+"="+dir)
	}
	return env, nil
}

// absolutePath returns the absolute folders of a PATH value.
func absolutePath(value string) string {
	var keep []string
	for _, dir := range filepath.SplitList(value) {
		if filepath.IsAbs(dir) {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

// goEnvironment is what the Go indexer's go command is told: use the
// modules already in this machine's module cache and never fetch one
// (GOPROXY=off), never a workspace or another toolchain, no cgo (nothing
// of the repository's is compiled or run), its build cache in the scratch
// folder, and a soft memory limit under the hard one. MALLOC_ARENA_MAX
// keeps the C allocator of a binary linked with cgo (the local server
// links tree-sitter) from reserving 64 MB of address space per thread,
// which RLIMIT_AS would count.
func goEnvironment(l Limits) []string {
	return []string{
		"GOPROXY=off", "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0",
		"GOTELEMETRY=off", "GOMODCACHE=" + moduleCache(), "MALLOC_ARENA_MAX=2",
		fmt.Sprintf("GOMEMLIMIT=%d", int64(float64(l.MemoryBytes)*softShare)),
	}
}

// moduleCache returns this process's Go module cache: GOMODCACHE, else
// the first GOPATH folder's pkg/mod, else ~/go/pkg/mod (the go command's
// defaults, without running it).
func moduleCache() string {
	if dir := os.Getenv("GOMODCACHE"); dir != "" {
		return dir
	}
	if paths := filepath.SplitList(os.Getenv("GOPATH")); len(paths) > 0 && paths[0] != "" {
		return filepath.Join(paths[0], "pkg", "mod")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, "go", "pkg", "mod")
}
