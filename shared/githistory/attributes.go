package githistory

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxAttributesBytes bounds the .gitattributes files a copy reads.
const maxAttributesBytes = 1 << 20

// writeAttributes gives a bare copy of a history the attributes a checkout
// of commit has. git reads no .gitattributes in a bare repository, only
// its info/attributes, and attributes change how diffs look: the function
// a hunk is in ("@@ … @@ sub name", diff=perl), and which files are
// binary (-diff). So the .gitattributes files of commit's tree are written
// there, as a checkout's git applies them to every commit it shows: each
// pattern made relative to the top (attributesLine), shallower files
// first, so that deeper ones win as they do in a checkout. No attribute
// can run a program here: external diffs and textconv are off (command).
func writeAttributes(ctx context.Context, r *Repo, commit string) error {
	out, err := r.output(ctx, "ls-tree", "-r", "-z", "--full-tree", commit)
	if err != nil {
		return fmt.Errorf("list the tree of %s: %w", commit, err)
	}
	var files []treeFile
	for _, entry := range bytes.Split(out, []byte{0}) {
		meta, name, ok := strings.Cut(string(entry), "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 && f[1] == "blob" && path.Base(name) == ".gitattributes" {
			files = append(files, treeFile{name: name, id: f[2]})
		}
	}
	var b strings.Builder
	for _, f := range byDepth(files) {
		data, err := r.output(ctx, "cat-file", "blob", f.id)
		if err != nil {
			return fmt.Errorf("read %s at %s: %w", f.name, commit, err)
		}
		if b.Len()+len(data) > maxAttributesBytes {
			break
		}
		dir := path.Dir(f.name)
		for _, line := range strings.Split(string(data), "\n") {
			if l, ok := attributesLine(dir, line); ok {
				b.WriteString(l + "\n")
			}
		}
	}
	info := filepath.Join(r.dir, "info")
	if err := os.MkdirAll(info, 0o700); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(info, "attributes"), b.String())
}

type treeFile struct{ name, id string }

// byDepth orders files by their folder's depth, shallowest first (ls-tree
// lists them by name).
func byDepth(files []treeFile) []treeFile {
	var out []treeFile
	for depth := 0; len(out) < len(files); depth++ {
		for _, f := range files {
			if strings.Count(f.name, "/") == depth {
				out = append(out, f)
			}
		}
	}
	return out
}

// attributesLine is a line of the .gitattributes file in folder dir
// ("." for the top) as info/attributes must say it, or false for a line
// to leave out (blank, a comment, or what git honours in the top file
// only or cannot be moved: a macro, a quoted pattern below the top). A
// pattern without a slash matches at any depth below dir (dir/**/p);
// one with a slash is relative to dir.
func attributesLine(dir, line string) (string, bool) {
	t := strings.TrimSpace(line)
	if t == "" || strings.HasPrefix(t, "#") {
		return "", false
	}
	if dir == "." {
		return t, true
	}
	if strings.HasPrefix(t, "[attr]") || strings.HasPrefix(t, `"`) {
		return "", false
	}
	pattern, attrs, _ := strings.Cut(t, " ")
	if p, a, ok := strings.Cut(t, "\t"); ok && len(p) < len(pattern) {
		pattern, attrs = p, a
	}
	if strings.Contains(strings.TrimSuffix(pattern, "/"), "/") {
		pattern = dir + "/" + strings.TrimPrefix(pattern, "/")
	} else {
		pattern = dir + "/**/" + pattern
	}
	return pattern + " " + strings.TrimSpace(attrs), true
}
