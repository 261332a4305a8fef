package wiring

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/settings"
)

// CursorKey is the secret that authenticates the list tools' paging
// cursors (shared/cursor). A family whose tools page lists it in its
// Settings, so that a deployment gives it to the family's functions (the
// CDK app generates it in Secrets Manager unless the deployment names
// its own parameter); Env.Cursors reads it.
var CursorKey = settings.New("TOOLSHED_CURSOR_KEY", "",
	fmt.Sprintf("the key that authenticates the list tools' paging cursors (see [Paging](http-api.md#paging)), at least %d characters, the same for every process serving one deployment; unset locally, one is generated once and kept in the data directory's `%s`; deployed, the CDK app generates one in Secrets Manager unless the deployment names its own",
		cursor.MinKeyLen, cursorKeyFile),
	settings.Text).Secret()

// cursorKeyFile is where the local server keeps the key it generated, in
// its data directory.
const cursorKeyFile = "cursor.key"

// Cursors returns the key of the paging cursors, the same for every
// family of the process: TOOLSHED_CURSOR_KEY (deployed, a secret the
// function read at start); unset, the one kept in the data directory,
// generated there on first use, so cursors outlive a restart; without a
// data directory, a key of the process's own. A Lambda function without
// it does not start: each instance would refuse the others' cursors.
func (e *Env) Cursors() (cursor.Key, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cursors != nil {
		return *e.cursors, nil
	}
	secret, err := CursorKey.Get(e.Getenv)
	var key cursor.Key
	switch {
	case err != nil:
		return cursor.Key{}, err
	case secret != "":
		// cursor.NewKey refuses a short key (its length is checked there only).
		if key, err = cursor.NewKey([]byte(secret)); err != nil {
			err = fmt.Errorf("%s: %w", CursorKey.Name(), err)
		}
	case config.InLambda(e.Getenv):
		err = fmt.Errorf("%s is not set: a deployment gives every function that pages the same key (the CDK app does)", CursorKey.Name())
	case e.Config.DataDir == "":
		key = cursor.RandomKey()
	default:
		key, err = localCursorKey(filepath.Join(e.Config.DataDir, cursorKeyFile))
	}
	if err != nil {
		return cursor.Key{}, fmt.Errorf("the cursor key: %w", err)
	}
	e.cursors = &key
	return key, nil
}

// CursorsFor returns the paging cursors' key when the process serves one
// of the tools that page (Cursors), and the zero Key otherwise: a
// function serving none of them starts without the key, which only
// paging would use.
func (e *Env) CursorsFor(paging ...string) (cursor.Key, error) {
	if !slices.ContainsFunc(paging, e.Serves) {
		return cursor.Key{}, nil
	}
	return e.Cursors()
}

// localCursorKey reads the key kept at path, or first makes one there:
// 32 random bytes in hex, readable by the owner only. The file appears
// whole (written aside, then linked into place), and when two processes
// make one at once, the first to link it wins and both use it.
func localCursorKey(path string) (cursor.Key, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		err = makeCursorKey(path)
		if err == nil || errors.Is(err, fs.ErrExist) {
			data, err = os.ReadFile(path)
		}
	}
	if err != nil {
		return cursor.Key{}, err
	}
	return cursor.NewKey([]byte(strings.TrimSpace(string(data))))
}

func makeCursorKey(path string) error {
	secret := make([]byte, cursor.MinKeyLen)
	rand.Read(secret) // never fails (crypto/rand)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cursor-*.key") // 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // the link stays
	_, err = tmp.WriteString(hex.EncodeToString(secret) + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Link(tmp.Name(), path)
}
