package githistory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/reposcope"
)

// PushInput says what Push uploads.
type PushInput struct {
	Repo   reposcope.Ref
	Dir    string // the repository (a checkout or a bare repository)
	Commit string // the commit pushed, an id
	Bound  Bound
	Now    time.Time
}

// Pushed is what Push did.
type Pushed struct {
	Manifest Manifest
	Pack     *Pack // the pack uploaded; nil when there was nothing new
	Shallow  int   // the commits it made shallow (their parents not uploaded)
}

// Push uploads the history of in.Commit that the repository's history in
// the bucket lacks: one pack (git pack-objects) of the commits reachable
// from it and not from the tips already uploaded (the first push: all of
// them), within in.Bound, with their trees and the annotated tags of the
// refs uploaded; then the manifest naming it after the packs before it.
// A push of a commit already uploaded uploads no pack, and still records
// the refs as they are now.
func Push(ctx context.Context, b *objects.Bucket, in PushInput) (Pushed, error) {
	if err := in.Repo.Check(); err != nil {
		return Pushed{}, err
	}
	if !isID(in.Commit) {
		return Pushed{}, fmt.Errorf("push the history: %q is not a commit id", in.Commit)
	}
	r, err := Open(ctx, in.Dir)
	if err != nil {
		return Pushed{}, err
	}
	old, etag, found, err := ReadManifest(ctx, b, in.Repo, "")
	if err != nil {
		return Pushed{}, fmt.Errorf("read the history in the bucket: %w (a corrupt one is replaced by pushing with a new -repo name)", err)
	}
	plan, err := r.plan(ctx, in, old)
	if err != nil {
		return Pushed{}, err
	}
	out := Pushed{Manifest: plan.manifest(old, in.Commit), Shallow: len(plan.shallow)}
	if len(plan.commits) > 0 || len(plan.tags) > 0 {
		pack, err := r.uploadPack(ctx, b, in, plan)
		if err != nil {
			return Pushed{}, err
		}
		out.Pack = &pack
		out.Manifest.Packs = append(out.Manifest.Packs, pack)
	}
	if out.Manifest.Tips, err = r.tips(ctx, old.Tips, in.Commit); err != nil {
		return Pushed{}, err
	}
	if len(out.Manifest.Packs) == 0 {
		return out, fmt.Errorf("push the history: commit %s is below the history already pushed; nothing to upload", in.Commit)
	}
	return out, writeManifest(ctx, b, in.Repo, out.Manifest, etag, found)
}

// pushPlan is what a push uploads.
type pushPlan struct {
	commit   string              // the commit pushed
	bound    []string            // git rev-list's options of the bound
	known    []string            // the manifest's tips this repository has
	commits  []string            // the commits to upload
	shallow  []string            // those of them whose parents are not uploaded
	refs     []PushedRef         // the refs whose commits are uploaded once pushed
	tags     []string            // the annotated tags among them not uploaded yet
	uploaded map[string]struct{} // the commits uploaded before, as far as this repository knows
}

// plan works out what pushing in.Commit over old uploads.
func (r *Repo) plan(ctx context.Context, in PushInput, old Manifest) (pushPlan, error) {
	p := pushPlan{commit: in.Commit, bound: in.Bound.args()}
	for _, t := range old.Tips {
		if r.hasCommit(ctx, t) {
			p.known = append(p.known, t)
		}
	}
	var err error
	if p.uploaded, err = r.uploaded(ctx, p.known, old.Shallow); err != nil {
		return pushPlan{}, err
	}
	args := append([]string{"rev-list", "--parents"}, p.bound...)
	out, err := r.output(ctx, append(append(args, in.Commit, "--not"), p.known...)...)
	if err != nil {
		return pushPlan{}, err
	}
	parents := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		p.commits = append(p.commits, f[0])
		parents[f[0]] = f[1:]
	}
	for _, c := range p.commits {
		for _, parent := range parents[c] {
			_, pushed := parents[parent]
			if _, before := p.uploaded[parent]; !pushed && !before {
				p.shallow = append(p.shallow, c)
				break
			}
		}
	}
	p.refs, p.tags, err = r.pushedRefs(ctx, old, func(c string) bool {
		_, pushed := parents[c]
		_, before := p.uploaded[c]
		return pushed || before
	})
	return p, err
}

// args are git rev-list's options of the bound.
func (b Bound) args() []string {
	var args []string
	if b.Depth > 0 {
		args = append(args, "--max-count="+strconv.Itoa(b.Depth))
	}
	if !b.Since.IsZero() {
		args = append(args, "--since="+strconv.FormatInt(b.Since.Unix(), 10))
	}
	return args
}

// manifest is old with the plan's commits, shallow commits and refs (its
// pack and tips are added by Push).
func (p pushPlan) manifest(old Manifest, commit string) Manifest {
	m := Manifest{Version: ManifestVersion, Packs: slices.Clone(old.Packs), Refs: p.refs, Commits: old.Commits + len(p.commits)}
	m.Shallow = append(slices.Clone(old.Shallow), p.shallow...)
	return m
}

// hasCommit reports whether the repository has the commit id.
func (r *Repo) hasCommit(ctx context.Context, id string) bool {
	_, err := r.output(ctx, "cat-file", "-e", id+"^{commit}")
	return err == nil
}

// uploaded returns the commits reachable from tips without going past a
// shallow commit: those uploaded, or fewer (a commit also reachable from
// beyond the shallow ones is left out), never more.
func (r *Repo) uploaded(ctx context.Context, tips, shallow []string) (map[string]struct{}, error) {
	set := map[string]struct{}{}
	if len(tips) == 0 {
		return set, nil
	}
	args := append([]string{"rev-list"}, tips...)
	if len(shallow) > 0 {
		var local []string
		for _, s := range shallow {
			if r.hasCommit(ctx, s) {
				local = append(local, s)
			}
		}
		if len(local) > 0 {
			out, err := r.output(ctx, append([]string{"rev-list", "--no-walk", "--parents"}, local...)...)
			if err != nil {
				return nil, err
			}
			args = append(args, "--not")
			for line := range strings.Lines(string(out)) {
				args = append(args, strings.Fields(line)[1:]...)
			}
		}
	}
	out, err := r.output(ctx, args...)
	if err != nil {
		return nil, err
	}
	for line := range strings.Lines(string(out)) {
		set[strings.TrimSpace(line)] = struct{}{}
	}
	return set, nil
}

// pushedRefs returns the repository's branches and tags whose commits are
// uploaded once pushed (tags of other objects left out), and the
// annotated tags among them that old does not name.
func (r *Repo) pushedRefs(ctx context.Context, old Manifest, uploaded func(string) bool) ([]PushedRef, []string, error) {
	out, err := r.output(ctx, "for-each-ref", "--format=%(refname) %(objectname) %(objecttype) %(*objectname) %(*objecttype)", "refs/heads/", "refs/tags/")
	if err != nil {
		return nil, nil, err
	}
	had := map[string]bool{}
	for _, ref := range old.Refs {
		had[ref.Object] = true
	}
	var refs []PushedRef
	var tags []string
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		ref := PushedRef{Name: f[0], Object: f[1], Commit: f[1]}
		switch {
		case len(f) == 5 && f[2] == "tag" && f[4] == "commit":
			ref.Commit = f[3]
		case len(f) != 3 || f[2] != "commit":
			continue
		}
		if !uploaded(ref.Commit) || !refName.MatchString(ref.Name) {
			continue
		}
		refs = append(refs, ref)
		if ref.Object != ref.Commit && !had[ref.Object] {
			tags = append(tags, ref.Object)
		}
	}
	return refs, tags, nil
}

// tips returns the commits whose history is uploaded once commit is: the
// old tips this repository does not have, and of the others and commit
// those that are not an ancestor of another.
func (r *Repo) tips(ctx context.Context, old []string, commit string) ([]string, error) {
	var unknown []string
	known := []string{commit}
	for _, t := range old {
		if t == commit {
			continue
		}
		if r.hasCommit(ctx, t) {
			known = append(known, t)
		} else {
			unknown = append(unknown, t)
		}
	}
	out, err := r.output(ctx, append([]string{"merge-base", "--independent"}, known...)...)
	if err != nil {
		return nil, err
	}
	return append(unknown, strings.Fields(string(out))...), nil
}

// uploadPack makes the plan's pack with git and uploads it, its index
// after it.
func (r *Repo) uploadPack(ctx context.Context, b *objects.Bucket, in PushInput, p pushPlan) (Pack, error) {
	tmp, err := os.MkdirTemp("", "toolshed-history-*")
	if err != nil {
		return Pack{}, err
	}
	defer os.RemoveAll(tmp)
	name, err := r.packObjects(ctx, filepath.Join(tmp, "pack"), p)
	if err != nil {
		return Pack{}, err
	}
	pack := Pack{Name: name, Tip: in.Commit, Commits: len(p.commits), Bound: in.Bound, Pushed: in.Now.UTC()}
	for _, ext := range []string{".pack", ".idx"} {
		f, err := os.Open(filepath.Join(tmp, "pack-"+strings.TrimPrefix(name, "pack-")+ext))
		if err != nil {
			return Pack{}, err
		}
		st, err := f.Stat()
		if err == nil {
			_, err = b.Upload(ctx, PackKey(in.Repo, name, ext), f, objects.PutOptions{ContentType: "application/x-git-packed-objects"})
		}
		f.Close()
		if err != nil {
			return Pack{}, fmt.Errorf("upload %s: %w", PackKey(in.Repo, name, ext), err)
		}
		if ext == ".pack" {
			pack.Bytes = st.Size()
		} else {
			pack.IdxBytes = st.Size()
		}
	}
	return pack, nil
}

// packObjects writes the pack of the plan's commits and tags at
// base-<id>.pack (and .idx) and returns its name, "pack-<id>". The pack
// is whole: no object in it is a delta against one outside it.
func (r *Repo) packObjects(ctx context.Context, base string, p pushPlan) (string, error) {
	list, wait := io.Reader(strings.NewReader("")), func() error { return nil }
	var listErr bytes.Buffer
	if len(p.commits) > 0 {
		rev := r.objectList(ctx, p)
		rev.Stderr = &listErr
		out, err := rev.StdoutPipe()
		if err != nil {
			return "", err
		}
		if err := rev.Start(); err != nil {
			return "", err
		}
		list, wait = out, rev.Wait
	}
	pack := r.command(ctx, "pack-objects", "-q", "--delta-base-offset", base)
	pack.Stdin = io.MultiReader(list, strings.NewReader(strings.Join(append(p.tags, ""), "\n")))
	var stderr bytes.Buffer
	pack.Stderr = &stderr
	out, err := pack.Output()
	if werr := wait(); werr != nil {
		return "", fmt.Errorf("git rev-list: %w: %s", werr, strings.TrimSpace(listErr.String()))
	}
	if err != nil {
		return "", fmt.Errorf("git pack-objects: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	id := strings.TrimSpace(string(out))
	if !isID(id) {
		return "", fmt.Errorf("git pack-objects named its pack %q", id)
	}
	return "pack-" + id, nil
}

// objectList is the git rev-list that lists the objects of the plan's
// commits. When every parent outside them is uploaded, it leaves out
// what the uploaded tips reach; otherwise (a bound cut the history) it
// lists each commit's whole tree, since what a parent not uploaded
// shares with it is not in the bucket.
func (r *Repo) objectList(ctx context.Context, p pushPlan) *exec.Cmd {
	if len(p.shallow) == 0 {
		return r.command(ctx, append(append(append([]string{"rev-list", "--objects"}, p.bound...), p.commit, "--not"), p.known...)...)
	}
	rev := r.command(ctx, "rev-list", "--objects", "--no-walk", "--stdin")
	rev.Stdin = strings.NewReader(strings.Join(p.commits, "\n") + "\n")
	return rev
}

// writeManifest writes m as the repository's manifest, over the one read
// (etag) or where there was none.
func writeManifest(ctx context.Context, b *objects.Bucket, r reposcope.Ref, m Manifest, etag string, found bool) error {
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	o := objects.PutOptions{ContentType: "application/json", CacheControl: "no-cache", IfNoneMatch: "*"}
	if found {
		o.IfMatch, o.IfNoneMatch = etag, ""
	}
	_, err = b.Put(ctx, ManifestKey(r), raw, o)
	if errors.Is(err, objects.ErrPrecondition) {
		return fmt.Errorf("another push of %s updated its history meanwhile: push again", r)
	}
	return err
}
