package repo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math/bits"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/klauspost/compress/s2"
	"github.com/toolshed/toolshed/shared/pathpolicy"
	"github.com/toolshed/toolshed/shared/secretscan"
)

// ExcludedDirs are the folders search never enters, at any depth (the
// excluded paths of the repository tools' contracts).
var ExcludedDirs = []string{"node_modules", ".git", "dist", "build", ".next", ".context"}

// File is one searchable file of a snapshot. It holds its content as it
// is, or compressed (S2, about 2.3 times smaller for source code) in a
// large repository's view (see LocalOptions.CompressAbove); Content, Text
// and ContentInto decompress it then (at gigabytes a second, still two to
// three times a search's CPU), and Trigrams lets a search skip a file
// without reading it.
type File struct {
	// Path is slash separated, relative to the repository root.
	Path string
	// ModTime is the file's modification time.
	ModTime time.Time

	plain  []byte // the content, when held as it is
	packed []byte // else the content, S2-compressed; both nil for a file not read yet (a cold one)
	size   int    // the content's length
	lines  int    // CountLines of the content

	// hash is the SHA-256 of the content: made with packed (the content
	// is at hand then), or on the first Hash of a file held as it is
	// (grep and read_file never ask).
	hashOnce sync.Once
	hash     [32]byte

	gramsOnce sync.Once
	grams     Trigrams
}

// NewFile makes the File of a text file's data (its content is data
// without a leading UTF-8 byte order mark, as ripgrep reads it), holding
// it compressed, or returns nil when data is binary (holds a NUL byte) or
// holds a secret (secretscan.Find: see content.go): no search tool reads
// either. It keeps no reference to data.
func NewFile(p string, data []byte, mod time.Time) *File { return newFile(p, data, mod, true) }

// newFile is NewFile, or with compress false a File that holds its
// content as it is: data itself, which nobody may modify then.
func newFile(p string, data []byte, mod time.Time, compress bool) *File {
	if bytes.IndexByte(data, 0) >= 0 || secretscan.Find(data) != nil {
		return nil
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	f := &File{Path: p, ModTime: mod, size: len(data), lines: CountLines(data)}
	if !compress {
		if data == nil {
			data = []byte{} // a File read has content, if empty
		}
		f.plain = data
		return f
	}
	f.hashOnce.Do(func() { f.hash = sha256.Sum256(data) })
	buf := scratch.Get().(*[]byte)
	defer scratch.Put(buf)
	if n := s2.MaxEncodedLen(len(data)); cap(*buf) < n {
		*buf = make([]byte, n)
	}
	f.packed = bytes.Clone(s2.Encode((*buf)[:cap(*buf)], data))
	return f
}

// scratch holds buffers for a moment's work on one file's content
// (compressing it, or decompressing it to make its trigram filter), so
// that reading a repository does not leave its size in garbage.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// Compressed reports whether the File holds its content compressed: a
// Text or Content is then a new copy each time.
func (f *File) Compressed() bool { return f.packed != nil }

// Size is the content's length in bytes.
func (f *File) Size() int { return f.size }

// Lines is the content's number of lines (CountLines).
func (f *File) Lines() int { return f.lines }

// Hash is the SHA-256 of the content: indexes tell by it whether what
// they made of a file is still of its content.
func (f *File) Hash() [32]byte {
	f.hashOnce.Do(func() { f.hash = sha256.Sum256(f.plain) })
	return f.hash
}

// Content returns the content, which the caller may keep and must not
// modify: the File's own when held as it is, else decompressed into a new
// slice.
func (f *File) Content() []byte {
	var buf []byte
	return f.ContentInto(&buf)
}

// ContentInto returns the content (which the caller must not modify): the
// File's own when held as it is, else decompressed into *buf, grown when
// it lacks the capacity: a loop over many files reuses one buffer. *buf
// is only ever a buffer of its own, never a File's content, so the next
// file decompressed into it cannot overwrite one.
func (f *File) ContentInto(buf *[]byte) []byte {
	if f.plain != nil {
		return f.plain
	}
	if cap(*buf) < f.size {
		*buf = make([]byte, f.size)
	}
	out, err := s2.Decode((*buf)[:f.size], f.packed)
	if err != nil {
		// packed was made by NewFile and is never modified.
		panic(fmt.Sprintf("repo: the compressed content of %s is corrupt: %v", f.Path, err))
	}
	return out
}

// Text returns the content as a string (Content without a copy). When
// the File holds it compressed, the string is a new copy, and whoever
// keeps a substring of it keeps the whole copy.
func (f *File) Text() string {
	data := f.Content()
	return unsafe.String(unsafe.SliceData(data), len(data))
}

// memory is what the file takes in memory: its content as held and its
// trigram filter (as built on first use).
func (f *File) memory() int64 {
	return int64(len(f.plain)) + int64(len(f.packed)) + int64(trigramBits(f.size)/8)
}

// memoryOf estimates what n bytes of text take as a snapshot's Files
// (which hold it as it is) once searched: the text and its trigram
// filters.
func memoryOf(n int64) int64 { return n + n/4 }

// CountLines counts the lines of a text as editors do: a last line without
// a newline counts, an empty text has none.
func CountLines(data []byte) int {
	n := bytes.Count(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// Trigrams returns which three-byte sequences occur in Data with its
// ASCII letters lower-cased, as a bitmap built on first use and kept with
// the file. Search tools use it
// to skip, without reading it, a file that cannot contain a literal.
func (f *File) Trigrams() Trigrams {
	f.gramsOnce.Do(func() {
		buf := scratch.Get().(*[]byte)
		defer scratch.Put(buf)
		f.grams = newTrigrams(f.ContentInto(buf))
	})
	return f.grams
}

// Trigrams is a Bloom filter of the trigrams of a text (two bits per
// trigram): Has never says no for a trigram of the text, and rarely yes
// for an absent one. It has one to two bits per byte of text, so it
// takes an eighth to a quarter of the text's size: on the Go tree, grep
// is as fast as with filters twice that size, and twice as slow on a
// literal found nowhere with filters half that size.
type Trigrams struct {
	bits  []uint64
	shift uint // 32 - log2(number of bits)
}

// Trigram bitmap sizes, in bits.
const (
	minTrigramBits = 1 << 9
	maxTrigramBits = 1 << 23
)

// trigramBits is the size of the filter of a text of n bytes.
func trigramBits(n int) int {
	size := minTrigramBits
	for size < n && size < maxTrigramBits {
		size <<= 1
	}
	return size
}

func newTrigrams(text []byte) Trigrams {
	n := trigramBits(len(text))
	t := Trigrams{bits: make([]uint64, n/64), shift: uint(32 - bits.TrailingZeros(uint(n)))}
	if len(text) < 3 {
		return t
	}
	h := uint32(lower(text[0]))<<8 | uint32(lower(text[1]))
	for _, c := range text[2:] {
		h = (h<<8 | uint32(lower(c))) & 0xFFFFFF
		i, j := t.slots(h)
		t.bits[i>>6] |= 1 << (i & 63)
		t.bits[j>>6] |= 1 << (j & 63)
	}
	return t
}

// lower lower-cases an ASCII letter.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// slots are the two bits of a trigram.
func (t Trigrams) slots(h uint32) (uint32, uint32) {
	return (h * 0x9E3779B1) >> t.shift, (h * 0x85EBCA77) >> t.shift
}

// Has reports whether the trigram abc may occur in the text.
func (t Trigrams) Has(a, b, c byte) bool {
	i, j := t.slots(uint32(a)<<16 | uint32(b)<<8 | uint32(c))
	return t.bits[i>>6]&(1<<(i&63)) != 0 && t.bits[j>>6]&(1<<(j&63)) != 0
}

// candidate is a file the walk found; load reads it.
type candidate struct {
	path string
	d    fs.DirEntry
}

// loader reads one candidate. It returns nil for a file that is not
// searched (binary), and may hand out a file it read before.
type loader func(c candidate) (*File, error)

// searchable walks fsys and returns its searchable files in walk order:
// directory by directory, names sorted. The rules, applied during the
// walk:
//
//   - .gitignore files at every level, with git's precedence (a deeper
//     file and a later line win; "!" re-includes; an ignored folder is
//     not entered), and .ignore and .rgignore files as ripgrep reads them;
//   - the ExcludedDirs, hidden files and folders (names starting with
//     "."), symbolic links, anything that is not a regular file and
//     whatever the policy refuses are skipped;
//   - a file that contains a NUL byte is binary and skipped, and so is a
//     file whose content holds a secret (see newFile).
//
// Files are read by load, by a worker per core.
func searchable(ctx context.Context, fsys fs.FS, policy *Policy, load loader) ([]*File, error) {
	var cands []candidate
	err := walk(ctx, fsys, ".", &ignoreRules{}, policy, nil, func(c candidate) { cands = append(cands, c) })
	if err != nil {
		return nil, err
	}
	files := make([]*File, len(cands))
	errs := make([]error, len(cands))
	parallel(len(cands), func(n int) {
		if ctx.Err() == nil {
			files[n], errs[n] = load(cands[n])
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := files[:0]
	for n, f := range files {
		if errs[n] != nil {
			return nil, fmt.Errorf("read %s: %w", cands[n].path, errs[n])
		}
		if f != nil {
			out = append(out, f)
		}
	}
	return out, nil
}

// walk visits the folder start of fsys (whose parent's ignore rules are
// inherited) and everything below it that search may see: onDir gets each
// folder entered, start included, with the ignore rules in force inside
// it; onFile each regular file the rules keep, before the binary check.
// onDir may be nil.
func walk(ctx context.Context, fsys fs.FS, start string, inherited *ignoreRules, policy *Policy,
	onDir func(dir string, rules *ignoreRules), onFile func(candidate)) error {
	// matchers holds, for each folder walked, the ignore rules in force
	// inside it: its parent's, then its own.
	matchers := map[string]*ignoreRules{}
	err := fs.WalkDir(fsys, start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start {
				return err
			}
			return nil // unreadable: left out, as ripgrep does
		}
		if p == start {
			matchers[p] = readIgnore(fsys, p, inherited)
			if onDir != nil {
				onDir(p, matchers[p])
			}
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		dir := path.Dir(p)
		isDir := d.IsDir()
		if hidden(p, d.Name(), isDir, matchers[dir], policy) {
			if isDir {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case isDir:
			matchers[p] = readIgnore(fsys, p, matchers[dir])
			if onDir != nil {
				onDir(p, matchers[p])
			}
		case d.Type().IsRegular():
			onFile(candidate{path: p, d: d})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("walk repository: %w", err)
	}
	return nil
}

// hidden reports whether search skips the entry p (name is its last
// element) in a folder whose ignore rules are rules: a hidden name, an
// excluded folder, an ignored path, one the policy refuses, or a path
// longer than the file tools take (pathpolicy.DefaultMaxPathLen: read_file
// refuses it, and the paging cursors that carry a path stay within the
// contracts' length).
func hidden(p, name string, isDir bool, rules *ignoreRules, policy *Policy) bool {
	return len(p) > pathpolicy.DefaultMaxPathLen || strings.HasPrefix(name, ".") || (isDir && slices.Contains(ExcludedDirs, name)) ||
		rules.ignored(strings.Split(p, "/"), isDir) || policy.refusal(p) != ""
}

// IgnoreFiles are the files whose patterns hide files from search, as
// ripgrep reads them: .gitignore, .ignore and .rgignore. A later kind wins
// over an earlier one whatever the depth; within a kind, a deeper file and
// a later line win.
var IgnoreFiles = []string{".gitignore", ".ignore", ".rgignore"}

// ignoreRules are the patterns in force in a folder, one list per kind of
// IgnoreFiles, each ordered from the root down.
type ignoreRules [3][]gitignore.Pattern

// ignored reports whether the rules hide the path (split at "/").
func (r *ignoreRules) ignored(path []string, isDir bool) bool {
	for kind := len(r) - 1; kind >= 0; kind-- {
		for i := len(r[kind]) - 1; i >= 0; i-- {
			switch r[kind][i].Match(path, isDir) {
			case gitignore.Exclude:
				return true
			case gitignore.Include:
				return false
			}
		}
	}
	return false
}

// readIgnore returns the rules in force in dir: inherited followed by
// those of dir's ignore files that are regular files.
func readIgnore(fsys fs.FS, dir string, inherited *ignoreRules) *ignoreRules {
	var domain []string
	if dir != "." {
		domain = strings.Split(dir, "/")
	}
	out := inherited
	for kind, file := range IgnoreFiles {
		name := path.Join(dir, file)
		info, err := fs.Lstat(fsys, name)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			continue
		}
		if out == inherited {
			out = &ignoreRules{}
			for k := range out {
				out[k] = append([]gitignore.Pattern(nil), inherited[k]...)
			}
		}
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSuffix(line, "\r")
			if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
				continue
			}
			out[kind] = append(out[kind], gitignore.ParsePattern(line, domain))
		}
	}
	return out
}

// utf8BOM starts some UTF-8 files; search reads the text after it.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// ReadSearchable reads the file p of fsys as Searchable holds it: its
// content without a byte order mark and its modification time; nil when
// the file is binary. It applies no ignore rule: it is for a file that
// Searchable listed (the indexer's batches read the files its plan
// listed, one batch at a time).
func ReadSearchable(fsys fs.FS, p string) (*File, error) {
	info, err := fs.Stat(fsys, p)
	if err != nil {
		return nil, err
	}
	data, err := fs.ReadFile(fsys, p)
	if err != nil {
		return nil, err
	}
	return newFile(p, data, info.ModTime(), false), nil
}
