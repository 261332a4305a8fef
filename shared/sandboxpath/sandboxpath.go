// Package sandboxpath checks the paths callers give for files inside a
// sandbox (a tenant's file-io workspace) and turns them into storage keys.
//
// A path is relative, with '/' between segments, and names a file in the
// sandbox without any interpretation: no '..' segment (even one that would
// stay inside), no leading '/', no backslash, no NUL or other control
// character, no drive letter. Those are attempts to leave the sandbox, and
// Resolve refuses them with an *Error whose Escape is true. Paths that are
// merely malformed (empty, empty or '.' segments, a trailing '/', a segment
// over 255 bytes, a key over 1,024 bytes) are refused with Escape false.
//
// The same rules hold on every backend, so a file that can be written
// locally can be written to S3 and back: keys are at most MaxKeyBytes (the
// S3 limit) and segments at most MaxSegmentBytes (the usual file-name
// limit). Symbolic links are the backend's business (os.Root refuses those
// that leave the root).
package sandboxpath

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolshed/toolshed/shared/pathpolicy"
)

// Limits every backend applies.
const (
	// MaxKeyBytes is the longest storage key, prefix included (S3's limit).
	MaxKeyBytes = 1024
	// MaxSegmentBytes is the longest file or folder name (NAME_MAX).
	MaxSegmentBytes = 255
)

// Error is a refused path.
type Error struct {
	Path   string
	Reason string // e.g. "has a '..' segment"
	// Escape is true for attempts to reach outside the sandbox.
	Escape bool
}

func (e *Error) Error() string {
	return fmt.Sprintf("path %q %s", e.Path, e.Reason)
}

// Resolve checks p and returns the storage key of the file it names in the
// sandbox whose keys start with prefix: prefix + p.
func Resolve(prefix, p string) (string, error) {
	if err := check(p); err != nil {
		return "", err
	}
	key := prefix + p
	if len(key) > MaxKeyBytes {
		return "", &Error{Path: p, Reason: fmt.Sprintf(
			"is too long: its storage key would be %d bytes, the limit is %d (at most %d bytes of path here)",
			len(key), MaxKeyBytes, MaxKeyBytes-len(prefix))}
	}
	return key, nil
}

// check applies the rules of the package doc, escapes first.
func check(p string) error {
	if reason := pathpolicy.Escape(p); reason != "" {
		return &Error{Path: p, Reason: reason, Escape: true}
	}
	malformed := func(reason string) error { return &Error{Path: p, Reason: reason} }
	segments := strings.Split(p, "/")
	switch {
	case p == "":
		return malformed("is empty")
	case !utf8.ValidString(p):
		return malformed("is not valid UTF-8")
	}
	for _, s := range segments {
		switch {
		case s == "":
			return malformed("has an empty segment (a leading, trailing or doubled '/')")
		case s == ".":
			return malformed("has a '.' segment")
		case len(s) > MaxSegmentBytes:
			return malformed(fmt.Sprintf("has a segment longer than %d bytes", MaxSegmentBytes))
		}
	}
	return nil
}
