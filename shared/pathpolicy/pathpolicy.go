// Package pathpolicy decides which files a tool may read, and reads them
// safely from an io/fs.FS: whole within a size cap (Read), or opened for a
// reader of part of a file of any size (Open). One Policy is an allow
// list, a deny list (deny wins) and a size cap; Clean checks the path a
// caller sent.
//
// Patterns are doublestar globs ("docs/**", "**/*.pem", "{a,b}/*.md") on
// slash paths relative to the root, matched by shared/pathmatch (the
// repository policy's matcher): a pattern matches a path when it matches
// the path itself or any folder above it, so "docs/*" allows docs/a/b.md
// (docs/a matches), and "**/.git" denies .git/config. Deny patterns are
// matched without regard to case, so ".ENV" on a case-insensitive file
// system is refused like ".env".
//
// Every refusal is a *toolerr.Error: PATH_NOT_ALLOWED for a path that is
// malformed, escapes the root, goes through a symbolic link or is not
// allowed; RESOURCE_NOT_FOUND ("File not found") for a missing file;
// INVALID_INPUT for a folder; SIZE_LIMIT_EXCEEDED over the cap.
package pathpolicy

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/toolshed/toolshed/shared/pathmatch"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// DefaultMaxPathLen is the longest path accepted when Options.MaxPathLen is 0.
const DefaultMaxPathLen = 1024

// Options configure a Policy.
type Options struct {
	// Allow lists what may be read; empty allows every path.
	Allow []string
	// Deny lists what may never be read; it wins over Allow.
	Deny []string
	// MaxBytes is the largest file Read returns; 0 for no limit.
	MaxBytes int64
	// OverLimit, when set, ends the message of Read's size refusal: what
	// the caller may do instead.
	OverLimit string
	// MaxPathLen is the longest path in bytes; 0 for DefaultMaxPathLen.
	MaxPathLen int
}

// Policy is a checked set of Options.
type Policy struct {
	o     Options
	allow *pathmatch.Set // case-sensitive
	deny  *pathmatch.Set // without regard to case
}

// New checks the patterns and returns the policy.
func New(o Options) (*Policy, error) {
	allow, err := pathmatch.New(o.Allow, pathmatch.CaseSensitive)
	if err != nil {
		return nil, fmt.Errorf("path policy: allow: %w", err)
	}
	deny, err := pathmatch.New(o.Deny, pathmatch.IgnoreCase)
	if err != nil {
		return nil, fmt.Errorf("path policy: deny: %w", err)
	}
	if o.MaxPathLen <= 0 {
		o.MaxPathLen = DefaultMaxPathLen
	}
	return &Policy{o: o, allow: allow, deny: deny}, nil
}

// MustNew is New for policies fixed in the code; it panics on a bad pattern.
func MustNew(o Options) *Policy {
	p, err := New(o)
	if err != nil {
		panic(err)
	}
	return p
}

// notAllowed is the refusal of a path.
func notAllowed(name, format string, args ...any) *toolerr.Error {
	return toolerr.New(toolerr.PathNotAllowed, "Permission denied: %s", fmt.Sprintf(format, args...)).With("path", name)
}

// Escape says why a caller's relative path could name something outside
// the folder it is read in, or returns "" when it cannot: a NUL byte,
// control or format characters (C0, DEL, C1, bidirectional overrides), a
// backslash, an absolute or drive path, a ".." segment. The file tools and
// file-io's sandbox (shared/sandboxpath) refuse paths for these reasons.
func Escape(name string) string {
	for _, r := range name {
		switch {
		case r == 0:
			return "contains a NUL byte"
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			return "contains a control character"
		case r == '\\':
			return "contains a backslash; use '/' between folders"
		}
	}
	if strings.HasPrefix(name, "/") {
		return "is absolute; give a relative path"
	}
	if len(name) >= 2 && name[1] == ':' && ('a' <= name[0] && name[0] <= 'z' || 'A' <= name[0] && name[0] <= 'Z') {
		return "starts with a drive letter"
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return "has a '..' segment"
		}
	}
	return ""
}

// Clean checks a relative path sent by a caller and returns it in
// canonical form ("a/./b" and "a//b" become "a/b"). It refuses, with
// PATH_NOT_ALLOWED: an empty path or the root itself, invalid UTF-8,
// control characters (C0, DEL, C1, and Unicode format characters such as
// bidirectional overrides), backslashes, absolute paths (including "C:"
// drive paths), any ".." segment, and paths longer than the limit.
func (p *Policy) Clean(name string) (string, error) {
	switch {
	case name == "":
		return "", notAllowed(name, "the path is empty")
	case len(name) > p.o.MaxPathLen:
		return "", notAllowed(strings.ToValidUTF8(name[:64], "")+"…", "the path is %d bytes long, over the limit of %d", len(name), p.o.MaxPathLen)
	case !utf8.ValidString(name):
		return "", notAllowed(strings.ToValidUTF8(name, "\uFFFD"), "the path is not valid UTF-8")
	}
	if reason := Escape(name); reason != "" {
		return "", notAllowed(fmt.Sprintf("%q", name), "the path %s", reason)
	}
	clean := path.Clean(name)
	if clean == "." {
		return "", notAllowed(name, "the path names the root folder, not a file")
	}
	return clean, nil
}

// Check refuses a clean path that the deny list matches or the allow list
// does not.
func (p *Policy) Check(clean string) error {
	if m, denied := p.deny.Match(clean); denied {
		return notAllowed(clean, "%s is not readable (denied by %s)", clean, m.Pattern)
	}
	if len(p.o.Allow) == 0 {
		return nil // every path is allowed
	}
	if _, allowed := p.allow.Match(clean); !allowed {
		return notAllowed(clean, "%s is outside the readable paths (%s)", clean, strings.Join(p.o.Allow, ", "))
	}
	return nil
}

// File is a file Read returned.
type File struct {
	Path    string // the clean path
	Data    []byte
	ModTime time.Time
}

// Read cleans and checks name, then reads the file from fsys: it refuses
// a path through a symbolic link, a folder, or a file over MaxBytes (before
// reading it, and again while reading in case it grew). Errors from fsys
// that say the path escapes the root are PATH_NOT_ALLOWED; other failures
// are returned wrapped (INTERNAL_ERROR for the caller).
func (p *Policy) Read(fsys fs.FS, name string) (File, error) {
	clean, info, err := p.find(fsys, name)
	if err != nil {
		return File{}, err
	}
	if err := p.checkSize(clean, info.Size()); err != nil {
		return File{}, err
	}
	f, err := fsys.Open(clean)
	if err != nil {
		return File{}, fsError(clean, err)
	}
	defer f.Close()
	r := io.Reader(f)
	if p.o.MaxBytes > 0 {
		r = io.LimitReader(f, p.o.MaxBytes+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return File{}, fsError(clean, err)
	}
	if err := p.checkSize(clean, int64(len(data))); err != nil {
		return File{}, err
	}
	return File{Path: clean, Data: data, ModTime: info.ModTime()}, nil
}

// Opened is a file Open returned, open for reading; the caller closes it.
type Opened struct {
	fs.File
	Path    string // the clean path
	ModTime time.Time
}

// Open cleans and checks name and opens the file, refusing what Read
// refuses but for its size: it is for a reader of part of a file, which
// applies its own limit to what it returns.
func (p *Policy) Open(fsys fs.FS, name string) (Opened, error) {
	clean, info, err := p.find(fsys, name)
	if err != nil {
		return Opened{}, err
	}
	f, err := fsys.Open(clean)
	if err != nil {
		return Opened{}, fsError(clean, err)
	}
	return Opened{File: f, Path: clean, ModTime: info.ModTime()}, nil
}

// find cleans and checks name and returns the clean path with what stat
// says of the file, refusing a folder.
func (p *Policy) find(fsys fs.FS, name string) (string, fs.FileInfo, error) {
	clean, err := p.Clean(name)
	if err != nil {
		return "", nil, err
	}
	if err := p.Check(clean); err != nil {
		return "", nil, err
	}
	info, err := stat(fsys, clean)
	if err != nil {
		return "", nil, err
	}
	if info.IsDir() {
		return "", nil, toolerr.Field("path", "%s is a folder; name a file (there is no folder listing)", clean)
	}
	return clean, info, nil
}

// stat returns the FileInfo of a clean, checked path, refusing a path
// that goes through a symbolic link (even one that stays inside the root:
// it could lead to a denied file) and mapping a missing file to
// RESOURCE_NOT_FOUND. The path itself is asked first, so that a file
// system that refuses it (a repository view's policy) says so for the
// whole path.
func stat(fsys fs.FS, clean string) (fs.FileInfo, error) {
	info, err := fs.Lstat(fsys, clean)
	if err != nil {
		if errors.As(err, new(*toolerr.Error)) {
			return nil, fsError(clean, err)
		}
		info = nil // a missing or unreadable folder on the way says more below
	}
	for i := 0; i < len(clean); i++ {
		if clean[i] != '/' {
			continue
		}
		dir, err := fs.Lstat(fsys, clean[:i])
		if err != nil {
			return nil, fsError(clean, err)
		}
		if dir.Mode()&fs.ModeSymlink != 0 {
			return nil, notAllowed(clean, "%s is a symbolic link; links are not followed", clean[:i])
		}
		if !dir.IsDir() {
			return nil, notFound(clean)
		}
	}
	if info == nil {
		return nil, fsError(clean, err)
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		return nil, notAllowed(clean, "%s is a symbolic link; links are not followed", clean)
	}
	return info, nil
}

func (p *Policy) checkSize(clean string, n int64) error {
	if p.o.MaxBytes > 0 && n > p.o.MaxBytes {
		msg := fmt.Sprintf("%s is over the size limit of %d bytes", clean, p.o.MaxBytes)
		if p.o.OverLimit != "" {
			msg += ": " + p.o.OverLimit
		}
		return toolerr.New(toolerr.SizeLimitExceeded, "%s", msg).
			With("path", clean).With("bytes", n).With("limitBytes", p.o.MaxBytes)
	}
	return nil
}

// notFound is the seed's "File not found".
func notFound(clean string) *toolerr.Error {
	return toolerr.New(toolerr.ResourceNotFound, "File not found: %s", clean).With("path", clean)
}

// fsError maps a file system error onto the vocabulary; a file system
// that refused a path in the vocabulary already (a repository view's
// policy) is passed on.
func fsError(clean string, err error) error {
	var te *toolerr.Error
	switch {
	case errors.As(err, &te):
		return te
	case errors.Is(err, fs.ErrNotExist):
		return notFound(clean)
	case strings.Contains(err.Error(), "escapes from parent"), errors.Is(err, fs.ErrInvalid):
		return notAllowed(clean, "%s leads outside the repository", clean)
	case errors.Is(err, fs.ErrPermission):
		return notAllowed(clean, "%s cannot be read", clean)
	}
	return fmt.Errorf("read %s: %w", clean, err)
}
