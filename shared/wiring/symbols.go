package wiring

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/symbols"
)

// SymbolsDir is where symbol tables are saved under the local data
// directory; SymbolsPrefix, in the bucket: a folder of its own, not one
// under indexes/, where a tenant may be named "symbols" and the
// navigation functions, which write tables, must not write.
const (
	SymbolsDir    = "symbols"
	SymbolsPrefix = "symbols/"
)

// maxSymbolsBytes bounds a stored symbol table read from the bucket.
const maxSymbolsBytes = 512 << 20

// SymbolStores returns where the symbol table of a repository view is
// saved, named by repo.Key: deployed, in the bucket under SymbolsPrefix,
// in the folder of the snapshot's repository (a snapshot's table, saved
// by the first function that builds it, read by every later one; another
// repository at the same commit has its own); locally, under the data
// directory's SymbolsDir; nowhere (nil) without a data directory or for a
// view without a key.
func (e *Env) SymbolStores(ctx context.Context) (func(repo.View) symbols.Store, error) {
	if e.Config.Bucket != "" {
		bucket, err := e.S3(ctx)
		if err != nil {
			return nil, err
		}
		return func(v repo.View) symbols.Store {
			if key := repo.Key(v); key != "" {
				return bucketSymbols{bucket: bucket, key: SymbolsPrefix + key + ".bin"}
			}
			return nil
		}, nil
	}
	if e.Config.DataDir == "" {
		return nil, nil
	}
	dir := filepath.Join(e.Config.DataDir, SymbolsDir)
	return func(v repo.View) symbols.Store {
		if key := repo.Key(v); key != "" {
			return fileSymbols{path: filepath.Join(dir, key+".bin")}
		}
		return nil
	}, nil
}

// SymbolTables returns the symbol tables of the process, one per view of
// Repo, shared by every family that reads symbols (the navigation tools,
// context_search's live code indexes, which cut files at the tables'
// parses), so that each file is parsed once; built on first use, saved
// where SymbolStores says, and closed with the Env. Repo is opened first,
// so that the tables close (and save) before the views they follow do.
func (e *Env) SymbolTables(ctx context.Context) (*symbols.Tables, error) {
	if _, err := e.Repo(ctx); err != nil {
		return nil, err
	}
	e.mu.Lock()
	tables := e.symbols
	e.mu.Unlock()
	if tables != nil {
		return tables, nil
	}
	stores, err := e.SymbolStores(ctx)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.symbols == nil {
		tables = symbols.NewTables(e.Log, stores)
		e.symbols = tables
		e.closers = append(e.closers, func() error { tables.Close(); return nil })
	}
	return e.symbols, nil
}

// bucketSymbols is a symbol table saved in the bucket.
type bucketSymbols struct {
	bucket *objects.Bucket
	key    string
}

func (b bucketSymbols) Load(ctx context.Context) ([]byte, error) {
	data, _, err := b.bucket.Read(ctx, b.key, "", maxSymbolsBytes)
	return data, err
}

func (b bucketSymbols) Save(ctx context.Context, data []byte) error {
	_, err := b.bucket.Put(ctx, b.key, data, objects.PutOptions{})
	return err
}

// fileSymbols is a symbol table saved in a file, replaced whole: written
// aside, flushed and renamed into place, so a crash leaves the last one.
type fileSymbols struct{ path string }

func (f fileSymbols) Load(context.Context) ([]byte, error) { return os.ReadFile(f.path) }

func (f fileSymbols) Save(_ context.Context, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
		return fmt.Errorf("save the symbol table: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.path), ".symbols-*.tmp")
	if err != nil {
		return fmt.Errorf("save the symbol table: %w", err)
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	if _, err = tmp.Write(data); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), f.path)
	}
	if err != nil {
		return fmt.Errorf("save the symbol table: %w", err)
	}
	return nil
}
