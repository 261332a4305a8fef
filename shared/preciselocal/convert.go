package preciselocal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/toolshed/toolshed/shared/precise/fromscip"
	"github.com/toolshed/toolshed/shared/regularfile"
)

// ConvertName and ConvertSummary name the precise-convert subcommand
// (ConvertCommand), for the binaries that have it.
const (
	ConvertName    = "precise-convert"
	ConvertSummary = "convert a SCIP index into a precise store, as the local server does with what its indexers write"
)

// maxTextBytes bounds what is read of one file for its columns: more
// than any file the repository view searches.
const maxTextBytes = 256 << 20

// ConvertCommand is the precise-convert subcommand, `toolshed
// precise-convert [flags] SCIP`: fromscip.Build of the SCIP file into the
// store -o names. The local server runs it as a separate process, held
// to the indexers' limits, so that its own memory holds nothing of a
// conversion (about 150 MB more for the Go tree's index). Documents are
// those -docs names (the others are left out); their text is read from
// the repository -repo names, through os.Root and regular files only.
func ConvertCommand(ctx context.Context, name string, args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the store to `FILE`")
	docs := fs.String("docs", "", "the repository's files the index may name, a JSON object of path to hex SHA-256, in `FILE`")
	dir := fs.String("repo", "", "the repository's `folder`, whose files are read to convert columns and tell a stale document")
	var o fromscip.Options
	fs.StringVar(&o.Commit, "commit", "", "the `commit` indexed")
	fs.StringVar(&o.Root, "root", "", "the `folder` of the repository the indexer ran in (its documents' paths are relative to it)")
	fs.StringVar(&o.TempDir, "tmp", "", "spill space (`folder`; default the system's)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s [flags] SCIP\n\n%s.\n\n", name, ConvertSummary)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() != 1 || *out == "" || *docs == "" || *dir == "" {
		fs.Usage()
		return errors.New(name + ": SCIP, -o, -docs and -repo are needed")
	}
	var err error
	if o.Docs, err = readDocs(*docs); err != nil {
		return err
	}
	root, err := os.OpenRoot(*dir)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer root.Close()
	o.Text, o.SkipOutside = textIn(root), true
	return convertFile(ctx, fs.Arg(0), *out, o)
}

// convertFile converts the SCIP file in into the store out, flushed.
func convertFile(ctx context.Context, in, out string, o fromscip.Options) error {
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(out)
	if err != nil {
		return err
	}
	_, err = fromscip.Build(ctx, bufio.NewReaderSize(src, 1<<20), dst, o)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out)
	}
	return err
}

// readDocs reads the -docs file.
func readDocs(name string) (map[string][32]byte, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var hexes map[string]string
	if err := json.Unmarshal(data, &hexes); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	docs := make(map[string][32]byte, len(hexes))
	for p, h := range hexes {
		if docs[p], err = unhex(h); err != nil {
			return nil, err
		}
	}
	return docs, nil
}

// textIn reads a file of root as the indexer read it: a UTF-8 byte order
// mark left out, as the repository view's hashes leave it out. A file
// gone since, or no longer a regular file, reads as empty: its document
// is then stale, answered by search.
func textIn(root *os.Root) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		f, err := regularfile.Open(root, p)
		if err != nil {
			return nil, nil
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, maxTextBytes))
		if err != nil {
			return nil, nil
		}
		return bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), nil
	}
}
