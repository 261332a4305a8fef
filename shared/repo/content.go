package repo

import (
	"errors"
	"io/fs"

	"github.com/toolshed/toolshed/shared/secretscan"
)

// The content rule. Whatever its path, a file whose content holds a
// secret (secretscan.ContentRules: a private key block, a credential
// format) is refused like a denied path:
//
//   - It is never searchable: newFile makes no File of it, as of a binary
//     file. The searchable list scans a file when it reads it, once per
//     version of the file.
//   - Reading it through a view fails with PATH_NOT_ALLOWED naming the
//     rule: every read (ReadFile, and what a file Open returned reads)
//     scans the bytes again before they are passed on, whatever the list
//     holds. A read sees the file as it is now, which the list of a local
//     view may not have seen yet; and the scan (gigabytes a second) costs
//     little next to the read itself (a zip entry's decompression, say).
//
// Stat and ReadDir, which read no content, still show it. The content
// rules are built in: no setting turns them off.

// checkContent returns nil when data, the content of the file name, holds
// no secret, or the refusal that names the rule.
func checkContent(name string, data []byte) error {
	if rule := secretscan.Find(data); rule != nil {
		return contentRefusal(name, &secretscan.Found{Rule: rule})
	}
	return nil
}

// contentRefusal is the refusal of the file name, which holds a secret.
func contentRefusal(name string, found *secretscan.Found) error {
	return &fs.PathError{Op: "read", Path: name, Err: denied(name, "%s", found.Error())}
}

// checkedFile is a file a view opened: what it reads goes through a
// secretscan.Reader, so no byte of a secret is passed on, and reading a
// file that holds one fails with its refusal.
type checkedFile struct {
	fs.File
	r    *secretscan.Reader
	name string
}

// checked returns f, the file name opened, reading through a
// secretscan.Reader.
func checked(name string, f fs.File) fs.File {
	return &checkedFile{File: f, r: secretscan.NewReader(f), name: name}
}

func (f *checkedFile) Read(b []byte) (int, error) {
	n, err := f.r.Read(b)
	if found, ok := errors.AsType[*secretscan.Found](err); ok {
		return n, contentRefusal(f.name, found)
	}
	return n, err
}
