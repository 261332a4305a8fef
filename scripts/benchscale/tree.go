package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/toolshed/toolshed/shared/repo"
)

// maxFileBytes bounds the files a tree takes: read_file's limit, and
// more than real source files need.
const maxFileBytes = 1 << 20

// source is a folder of real code on this machine that trees are built
// from, and the names it holds that no repository would (folders skipped
// at its top, at any depth).
type source struct {
	root      string
	skipTop   []string // e.g. the module cache's download cache
	skipAnyOf []string // e.g. Python's __pycache__
}

// sources are the folders trees are built from, in this order: the Go
// tree, Python's standard library when installed, and the Go module
// cache.
func sources() ([]source, error) {
	goroot, err := goEnv("GOROOT")
	if err != nil {
		return nil, err
	}
	modcache, err := goEnv("GOMODCACHE")
	if err != nil {
		return nil, err
	}
	out := []source{{root: filepath.Join(goroot, "src")}}
	pythons, _ := filepath.Glob("/usr/lib/python3*")
	slices.Sort(pythons)
	for _, p := range pythons {
		if info, err := os.Stat(p); err == nil && info.IsDir() {
			out = append(out, source{root: p, skipAnyOf: []string{"__pycache__", "site-packages", "dist-packages"}})
		}
	}
	return append(out, source{root: modcache, skipTop: []string{"cache"}}), nil
}

// goEnv is `go env name`.
func goEnv(name string) (string, error) {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// candidate is a file of a source that a tree may take.
type candidate struct {
	abs  string // where it is
	rel  string // its slash path in a tree: the source's base name, then its path there
	size int64
}

// pool lists the files of the sources a repository would hold and search:
// regular files of at most maxFileBytes, not hidden, not in a folder search
// excludes, not refused by the default deny list, in walk order. Binary
// files are found (and skipped) when a tree is written.
func pool(srcs []source) ([]candidate, error) {
	policy, err := repo.NewPolicy(nil, "")
	if err != nil {
		return nil, err
	}
	var out []candidate
	for _, src := range srcs {
		base := filepath.Base(src.root)
		err := filepath.WalkDir(src.root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable: left out
			}
			if p == src.root {
				return nil
			}
			rel, _ := filepath.Rel(src.root, p)
			rel = filepath.ToSlash(rel)
			name := d.Name()
			if d.IsDir() {
				if strings.HasPrefix(name, ".") || slices.Contains(repo.ExcludedDirs, name) ||
					slices.Contains(src.skipAnyOf, name) || (!strings.Contains(rel, "/") && slices.Contains(src.skipTop, name)) {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || strings.HasPrefix(name, ".") || policy.Check(base+"/"+rel) != nil {
				return nil
			}
			info, err := d.Info()
			if err != nil || info.Size() == 0 || info.Size() > maxFileBytes {
				return nil
			}
			out = append(out, candidate{abs: p, rel: base + "/" + rel, size: info.Size()})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("walk %s: %w", src.root, err)
		}
	}
	return out, nil
}

// tree is a git repository of real files written for one size.
type tree struct {
	dir    string
	files  int
	bytes  int64
	copies int // how many times the pool was taken: above 1, copies live under copy2/, copy3/...
}

// buildTree writes n files of the pool into dir and commits them: the
// pool spread evenly (every len(pool)/n-th file, so a small tree holds a
// bit of every source), in copies under copy2/, copy3/... when n exceeds
// it; a binary file is skipped for the next one. A dir that holds a
// finished tree (its marker file) is reused.
func buildTree(dir string, cands []candidate, n int) (tree, error) {
	t := tree{dir: dir}
	marker := filepath.Join(dir, ".git", "benchscale-tree")
	if b, err := os.ReadFile(marker); err == nil {
		_, err := fmt.Sscan(string(b), &t.files, &t.bytes, &t.copies)
		return t, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return t, err
	}
	skip := map[int]bool{} // pool indexes found binary or unreadable
	for t.files < n {
		t.copies++
		prefix := ""
		if t.copies > 1 {
			prefix = "copy" + strconv.Itoa(t.copies) + "/"
		}
		want := min(n-t.files, len(cands))
		written, size, err := writeSpread(dir, prefix, cands, want, skip)
		if err != nil {
			return t, err
		}
		if written == 0 {
			return t, fmt.Errorf("the sources hold no text files to build a tree from")
		}
		t.files += written
		t.bytes += size
	}
	if err := commitAll(dir); err != nil {
		return t, err
	}
	return t, os.WriteFile(marker, fmt.Appendf(nil, "%d %d %d\n", t.files, t.bytes, t.copies), 0o644)
}

// writeSpread writes want files of cands spread evenly over it under
// dir/prefix, and returns how many it wrote and their bytes: the k-th
// file is the first candidate from spreadIndex(k) on that is not taken
// yet and not binary. skip remembers the candidates found binary or
// unreadable, across copies.
func writeSpread(dir, prefix string, cands []candidate, want int, skip map[int]bool) (int, int64, error) {
	used := make([]bool, len(cands))
	free := len(cands) // candidates not taken yet
	written := 0
	var size int64
	for k := 0; k < want; k++ {
		i := spreadIndex(k, want, len(cands))
		for {
			if free == 0 {
				return written, size, nil
			}
			for used[i] {
				i = (i + 1) % len(cands)
			}
			used[i] = true
			free--
			if skip[i] {
				continue
			}
			data, err := os.ReadFile(cands[i].abs)
			if err != nil || bytes.IndexByte(data, 0) >= 0 {
				skip[i] = true
				continue
			}
			p := filepath.Join(dir, filepath.FromSlash(prefix+cands[i].rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return written, size, err
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				return written, size, err
			}
			written++
			size += int64(len(data))
			break
		}
	}
	return written, size, nil
}

// spreadIndex is the k-th of n indexes spread evenly over 0..total-1.
func spreadIndex(k, n, total int) int {
	return int(int64(k) * int64(total) / int64(n))
}

// commitAll makes dir a git repository with one commit of everything in it.
func commitAll(dir string) error {
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=benchscale", "-c", "user.email=benchscale@toolshed.example", "commit", "-q", "-m", "benchscale tree"},
	} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s in %s: %v\n%s", args[0], dir, err, out)
		}
	}
	return nil
}

// sample returns n slash paths of the tree's files spread over it (fewer
// when it holds fewer), in walk order.
func (t tree) sample(n int) []string {
	var all []string
	filepath.WalkDir(t.dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil // unreadable: left out
		case d.IsDir() && d.Name() == ".git":
			return fs.SkipDir
		case d.Type().IsRegular():
			rel, _ := filepath.Rel(t.dir, p)
			all = append(all, filepath.ToSlash(rel))
		}
		return nil
	})
	var out []string
	for k := range min(n, len(all)) {
		out = append(out, all[spreadIndex(k, min(n, len(all)), len(all))])
	}
	return out
}
