// Package githistory reads a git repository's history for the history
// tools (list_commits, get_commit, compare, blame, search_commits,
// list_refs, and the "ref" of the file tools): commits, diffs, blame,
// refs and files at any revision.
//
// It runs the git program (2.39 here). We measured both engines the issue
// allowed on git.git (82k commits, one 500 MB pack, no commit-graph),
// same machine, same bare repository:
//
//   - log of a path (color.c, 82 commits): git 1.5 s; go-git v5.19.3's
//     Log with a PathFilter had found 14 of them when stopped at 120 s.
//   - blame of a 500-line file (color.c at HEAD): git 0.86 s; go-git's
//     Blame had not finished after 180 s (640 MB of memory).
//
// So git, for the local server and the deployed functions alike.
//
// The program never gets user input where it could read an option: every
// revision is checked first (CheckRev: one that looks like an option is
// INVALID_INPUT) and resolved to a commit id with --end-of-options, and
// paths always follow "--", read literally (--literal-pathspecs). The
// repository's own configuration cannot run programs or change the output
// (no external diff, no textconv, no fsmonitor, no pager; the user's and
// the system's configuration are not read).
package githistory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// Program is the git program run.
const Program = "git"

// MaxRevLen is the longest revision argument taken.
const MaxRevLen = 256

// ErrNoHistory means a directory is not the top of a git repository.
var ErrNoHistory = errors.New("no git history")

// Repo is one git repository: a working tree's top folder (whose .git it
// reads) or a bare repository.
type Repo struct {
	dir  string
	bare bool
	cat  catFile // Object's program
}

// Open returns the repository whose top folder (or bare repository) is
// dir, or ErrNoHistory. A folder inside another repository's working tree
// is not that repository: its history is not dir's.
func Open(ctx context.Context, dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	r := &Repo{dir: abs}
	// Asked apart: in a bare repository --show-toplevel fails.
	out, err := r.output(ctx, "rev-parse", "--is-bare-repository")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoHistory)
	}
	if strings.TrimSpace(string(out)) == "true" {
		r.bare = true
		return r, nil
	}
	out, err = r.output(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoHistory)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	top, err := filepath.EvalSymlinks(lines[len(lines)-1])
	real, err2 := filepath.EvalSymlinks(abs)
	if err != nil || err2 != nil || top != real {
		return nil, fmt.Errorf("%s: %w (it lies inside %s)", dir, ErrNoHistory, lines[len(lines)-1])
	}
	return r, nil
}

// Dir is the repository's folder.
func (r *Repo) Dir() string { return r.dir }

// Bare reports whether the repository has no working tree.
func (r *Repo) Bare() bool { return r.bare }

// CheckRev returns nil when rev may be given to git as a revision, or
// INVALID_INPUT naming field: empty, too long, an option ("-…"), a range
// (".."), a path inside a tree (":"), or with spaces or control characters.
func CheckRev(field, rev string) error {
	why := ""
	switch {
	case rev == "":
		why = "must not be empty"
	case len(rev) > MaxRevLen:
		why = fmt.Sprintf("is longer than %d characters", MaxRevLen)
	case strings.HasPrefix(rev, "-"):
		why = "must be a commit, branch or tag, not an option"
	case strings.Contains(rev, ".."):
		why = "must be one revision, not a range"
	case strings.ContainsAny(rev, ": \\"):
		why = "must be a commit, branch or tag (no ':', spaces or backslashes)"
	case strings.ContainsFunc(rev, func(c rune) bool { return c < 0x20 || c == 0x7f }):
		why = "must not contain control characters"
	}
	if why == "" {
		return nil
	}
	return toolerr.Field(field, "%s %s", field, why).With("value", rev)
}

// Resolve returns the commit id rev names, after CheckRev; an unknown
// revision is RESOURCE_NOT_FOUND naming it.
func (r *Repo) Resolve(ctx context.Context, field, rev string) (string, error) {
	if err := CheckRev(field, rev); err != nil {
		return "", err
	}
	out, err := r.output(ctx, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", NotFound(field, rev)
	}
	return strings.TrimSpace(string(out)), nil
}

// NotFound is the RESOURCE_NOT_FOUND of an unknown revision.
func NotFound(field, rev string) *toolerr.Error {
	return toolerr.New(toolerr.ResourceNotFound, "No commit, branch or tag %q in this repository (list_refs lists branches and tags)", rev).
		With("field", field).With("revision", rev)
}

// command returns git running args in the repository, with the
// configuration that could run programs or change the output turned off.
func (r *Repo) command(ctx context.Context, args ...string) *exec.Cmd {
	base := []string{"-C", r.dir, "--no-pager", "--literal-pathspecs",
		"-c", "core.fsmonitor=false", "-c", "core.quotePath=false", "-c", "diff.external=",
		"-c", "log.showSignature=false", "-c", "color.ui=false"}
	cmd := exec.CommandContext(ctx, Program, append(base, args...)...)
	cmd.Env = append(environment(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	cmd.Dir = r.dir
	return cmd
}

// environment is the process's environment without git's own variables:
// a GIT_DIR or GIT_WORK_TREE the server inherited (run from a hook, say)
// would make git read another repository than the one asked for.
func environment() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return env
}

// output runs git and returns what it printed; a failure carries its
// error output.
func (r *Repo) output(ctx context.Context, args ...string) ([]byte, error) {
	cmd := r.command(ctx, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
