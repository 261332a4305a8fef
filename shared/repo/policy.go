package repo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// DefaultDeny are the paths no repository tool ever reads, searches or
// indexes, in any folder: files that hold secrets or keys, and git's own
// folder. Deployments add patterns with TOOLSHED_REPO_DENY.
var DefaultDeny = []string{"**/.env*", "**/secrets*", "**/*.key", "**/*.pem", "**/.git"}

// Policy says which paths of a repository the repository tools may see.
// Every View applies it: a path it refuses is never listed, searched or
// indexed, and reading it fails with PATH_NOT_ALLOWED, whether or not the
// file exists. It refuses
//
//   - what the deny patterns match (DefaultDeny and the configured ones),
//     the path itself or any folder above it, without regard to case;
//   - the server's own data directory (its store and every tenant's
//     workspace) when it lies inside the repository.
type Policy struct {
	deny    []denyRule
	dataDir string // slash path of the data directory inside the repository, lower-cased; "" for none
}

// denyRule is one deny pattern and where it comes from.
type denyRule struct {
	pattern    string // lower-cased doublestar glob
	configured bool   // from TOOLSHED_REPO_DENY rather than DefaultDeny
}

// NewPolicy returns the policy of DefaultDeny and extra patterns (from
// TOOLSHED_REPO_DENY, see ParseDeny), with dataDir (a slash path relative
// to the repository root, "" when the data directory is elsewhere) kept
// out.
func NewPolicy(extra []string, dataDir string) (*Policy, error) {
	p := &Policy{dataDir: strings.ToLower(strings.Trim(dataDir, "/"))}
	for i, pat := range append(append([]string(nil), DefaultDeny...), extra...) {
		pat = strings.ToLower(pat)
		if !doublestar.ValidatePattern(pat) || strings.HasPrefix(pat, "/") {
			return nil, fmt.Errorf("deny pattern %q is not a valid relative glob", pat)
		}
		p.deny = append(p.deny, denyRule{pattern: pat, configured: i >= len(DefaultDeny)})
	}
	return p, nil
}

// ParseDeny reads the patterns of TOOLSHED_REPO_DENY (the setting is
// comma-separated), as .gitignore reads them: a pattern without "/" matches a name in any folder
// ("*.sqlite", "private"), one with "/" the path from the repository root
// ("config/prod/*"); a trailing "/" is dropped (a folder is refused with
// everything in it).
func ParseDeny(patterns []string) ([]string, error) {
	var out []string
	for _, pat := range patterns {
		pat = strings.TrimSuffix(strings.TrimSpace(pat), "/")
		if pat == "" {
			continue
		}
		if strings.HasPrefix(pat, "/") {
			pat = strings.TrimPrefix(pat, "/")
		} else if !strings.Contains(pat, "/") {
			pat = "**/" + pat
		}
		if !doublestar.ValidatePattern(pat) || strings.Contains(pat, "\\") {
			return nil, fmt.Errorf("TOOLSHED_REPO_DENY: %q is not a valid glob", pat)
		}
		out = append(out, pat)
	}
	return out, nil
}

// LocalPolicy is the policy of a local repository: NewPolicy with the data
// directory located inside root when it lies there. It refuses a data
// directory that is the repository itself or holds it (the tools would
// then serve every tenant's files, or a tenant's workspace as everyone's
// repository).
func LocalPolicy(root, dataDir string, extra []string) (*Policy, error) {
	rel := ""
	if dataDir != "" {
		r, err := realPath(root)
		if err != nil {
			return nil, fmt.Errorf("repository directory %s: %w", root, err)
		}
		d, err := realPath(dataDir)
		if err != nil {
			return nil, fmt.Errorf("data directory %s: %w", dataDir, err)
		}
		switch rel, err = filepath.Rel(r, d); {
		case err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)):
			rel = "" // elsewhere
			if back, err := filepath.Rel(d, r); err == nil && back != ".." && !strings.HasPrefix(back, ".."+string(filepath.Separator)) {
				return nil, fmt.Errorf("the repository %s lies inside the data directory %s: serve a repository outside it, or move the data directory (TOOLSHED_DATA_DIR, -data)", r, d)
			}
		case rel == ".":
			return nil, fmt.Errorf("the data directory %s is the repository itself: give the server a data directory of its own (TOOLSHED_DATA_DIR, -data)", d)
		}
		rel = filepath.ToSlash(rel)
	}
	return NewPolicy(extra, rel)
}

// realPath is the absolute path of p with symbolic links resolved; for a
// path that does not exist yet (a data directory created on first use),
// its nearest existing parent is resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for {
		real, err := filepath.EvalSymlinks(abs)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return "", err
		}
		rest = filepath.Join(filepath.Base(abs), rest)
		abs = parent
	}
}

// DataDir returns the slash path of the server's data directory inside the
// repository (lower-cased), or "" when it lies elsewhere.
func (p *Policy) DataDir() string { return p.dataDir }

// Check returns nil when the tools may see the slash path name (relative to
// the repository root), or the PATH_NOT_ALLOWED error saying why not.
func (p *Policy) Check(name string) error {
	if p == nil {
		return nil
	}
	lower := strings.ToLower(name)
	if p.dataDir != "" && (lower == p.dataDir || strings.HasPrefix(lower, p.dataDir+"/")) {
		return denied(name, "it is in the server's data directory (%s/), which holds every tenant's stored data and is never part of the repository", p.dataDir)
	}
	for q := lower; q != "." && q != ""; q = path.Dir(q) {
		for _, r := range p.deny {
			if ok, _ := doublestar.Match(r.pattern, q); ok {
				return denied(name, "%s", r.why(q != lower))
			}
		}
	}
	return nil
}

// hides reports whether the policy refuses the path p itself, not
// counting the folders above it: a walk that never enters a refused
// folder needs no more.
func (p *Policy) hides(name string) bool {
	if p == nil {
		return false
	}
	lower := strings.ToLower(name)
	if lower == p.dataDir {
		return true
	}
	for _, r := range p.deny {
		if ok, _ := doublestar.Match(r.pattern, lower); ok {
			return true
		}
	}
	return false
}

// why says in words why a rule refuses a path (inFolder: the rule matched
// a folder above it).
func (r denyRule) why(inFolder bool) string {
	what := strings.TrimPrefix(r.pattern, "**/")
	where := "it matches"
	if inFolder {
		where = "it lies in a folder matching"
	}
	switch {
	case r.configured:
		return fmt.Sprintf("%s %q, which this deployment denies (TOOLSHED_REPO_DENY)", where, what)
	case what == ".git":
		return "it is part of git's own folder (.git/), which the repository tools never read"
	}
	return fmt.Sprintf("%s %q, one of the patterns for secrets and keys (%s) the repository tools never read", where, what, denyList())
}

// denyList is DefaultDeny in words.
func denyList() string {
	names := make([]string, len(DefaultDeny))
	for i, p := range DefaultDeny {
		names[i] = strings.TrimPrefix(p, "**/")
	}
	return strings.Join(names, ", ")
}

// denied is the refusal of a path.
func denied(name, format string, args ...any) *toolerr.Error {
	return toolerr.New(toolerr.PathNotAllowed, "Permission denied: %s is not readable: %s", name, fmt.Sprintf(format, args...)).
		With("path", name)
}

// checkOp refuses, as fs functions fail, an operation on a path the policy
// hides.
func (p *Policy) checkOp(op, name string) error {
	if err := p.Check(name); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return nil
}

// osFS is the part of an os.Root's file system a policed view reads through.
type osFS interface {
	fs.StatFS
	fs.ReadLinkFS
}

// policedFS applies a Policy to every path of a file system.
type policedFS struct {
	fsys   osFS
	policy *Policy
}

func (p policedFS) Open(name string) (fs.File, error) {
	if err := p.policy.checkOp("open", name); err != nil {
		return nil, err
	}
	return p.fsys.Open(name)
}

func (p policedFS) Stat(name string) (fs.FileInfo, error) {
	if err := p.policy.checkOp("stat", name); err != nil {
		return nil, err
	}
	return p.fsys.Stat(name)
}

func (p policedFS) Lstat(name string) (fs.FileInfo, error) {
	if err := p.policy.checkOp("lstat", name); err != nil {
		return nil, err
	}
	return p.fsys.Lstat(name)
}

func (p policedFS) ReadLink(name string) (string, error) {
	if err := p.policy.checkOp("readlink", name); err != nil {
		return "", err
	}
	return p.fsys.ReadLink(name)
}

func (p policedFS) ReadFile(name string) ([]byte, error) {
	if err := p.policy.checkOp("open", name); err != nil {
		return nil, err
	}
	return fs.ReadFile(p.fsys, name)
}

// ReadDir lists a folder without the entries the policy hides.
func (p policedFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := p.policy.checkOp("readdir", name); err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(p.fsys, name)
	out := entries[:0]
	for _, e := range entries {
		if p.policy.Check(path.Join(name, e.Name())) == nil {
			out = append(out, e)
		}
	}
	return out, err
}

var _ interface {
	fs.StatFS
	fs.ReadLinkFS
	fs.ReadFileFS
	fs.ReadDirFS
} = policedFS{}

// osRootFS is an os.Root's FS (fs.StatFS and fs.ReadLinkFS since Go 1.25).
func osRootFS(root *os.Root) osFS { return root.FS().(osFS) }
