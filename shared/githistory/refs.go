package githistory

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"
)

// Ref is a branch or a tag.
type Ref struct {
	Name   string // "main", "v1.2.0"
	Kind   string // "branch" or "tag"
	Commit string // the commit it names (a tag's, peeled)
	Date   time.Time
}

// Refs returns the repository's branches, then its tags, each sorted by
// name.
func (r *Repo) Refs(ctx context.Context) ([]Ref, error) {
	out, err := r.output(ctx, "for-each-ref", "--format=%(refname)%00%(objectname)%00%(*objectname)%00%(creatordate:iso-strict)",
		"refs/heads/", "refs/tags/")
	if err != nil {
		return nil, err
	}
	var refs []Ref
	for line := range bytes.Lines(out) {
		f := strings.Split(strings.TrimSuffix(string(line), "\n"), "\x00")
		if len(f) != 4 {
			return nil, fmt.Errorf("git for-each-ref: unexpected line %q", line)
		}
		ref := Ref{Commit: f[1]}
		if f[2] != "" {
			ref.Commit = f[2]
		}
		if name, ok := strings.CutPrefix(f[0], "refs/heads/"); ok {
			ref.Name, ref.Kind = name, "branch"
		} else {
			ref.Name, ref.Kind = strings.TrimPrefix(f[0], "refs/tags/"), "tag"
		}
		ref.Date, _ = time.Parse(time.RFC3339, f[3])
		refs = append(refs, ref)
	}
	return refs, nil
}

// Head returns the commit HEAD names and the branch it is on ("" when
// detached).
func (r *Repo) Head(ctx context.Context) (commit, branch string, err error) {
	out, err := r.output(ctx, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", "", fmt.Errorf("the repository has no commit yet: %w", err)
	}
	name, _ := r.output(ctx, "symbolic-ref", "--quiet", "--short", "HEAD")
	return strings.TrimSpace(string(out)), strings.TrimSpace(string(name)), nil
}

// ReadFile returns the content of path at the commit rev (an id), and
// false when the commit has no such file.
func (r *Repo) ReadFile(ctx context.Context, rev, path string) ([]byte, bool, error) {
	if strings.HasPrefix(path, "/") || strings.Contains(path, "\x00") {
		return nil, false, fmt.Errorf("a path %q", path)
	}
	kind, err := r.output(ctx, "cat-file", "-t", "--end-of-options", rev+":"+path)
	if err != nil || strings.TrimSpace(string(kind)) != "blob" {
		return nil, false, nil
	}
	out, err := r.output(ctx, "cat-file", "blob", "--end-of-options", rev+":"+path)
	return out, err == nil, err
}

// MergeBase returns the best common ancestor of two commits (ids), or ""
// when they have none.
func (r *Repo) MergeBase(ctx context.Context, a, b string) (string, error) {
	out, err := r.output(ctx, "merge-base", "--end-of-options", a, b)
	return strings.TrimSpace(string(out)), err
}

// Count returns "<commits of a not in b> <commits of b not in a>" for two
// commits (ids).
func (r *Repo) Count(ctx context.Context, a, b string) (string, error) {
	out, err := r.output(ctx, "rev-list", "--left-right", "--count", "--end-of-options", a+"..."+b)
	return strings.TrimSpace(string(out)), err
}
