package goscip

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

// CommandName and CommandSummary name the index-go subcommand and say
// what it does, for the binaries that have it.
const (
	CommandName    = "index-go"
	CommandSummary = "write the SCIP index of the Go code in DIR"
)

// Command is the index-go subcommand of the binaries that index Go code
// (the local server, scripts/snapshot), run as `name index-go [flags] DIR
// [patterns]`: it writes the index to -o (default stdout) and a summary
// to stderr. A failed run leaves no output file. -h prints the usage.
func Command(ctx context.Context, name string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the index to `FILE` (default: standard output)")
	var o Options
	fs.BoolVar(&o.Tests, "tests", false, "index _test.go files too")
	fs.StringVar(&o.ModuleVersion, "module-version", "", "the indexed modules' `version` in symbols, e.g. a tag or commit (default \".\")")
	fs.IntVar(&o.MaxDocuments, "max-documents", 0, "stop with an error before the `N`+1st document (0: no limit)")
	fs.Int64Var(&o.MaxBytes, "max-bytes", 0, "stop with an error before the index passes `N` bytes (0: no limit)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: %s [flags] DIR [patterns]\n\n%s: of every module under DIR (its go.mod\n"+
			"files), the packages matching patterns (go list patterns, default ./...;\n"+
			"a relative one names folders from DIR, whichever module holds them).\n"+
			"See docs/precise-code-intelligence.md.\n\n", name, CommandSummary)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("index-go: DIR is missing")
	}
	stats, err := emitTo(ctx, *out, fs.Arg(0), fs.Args()[1:], stdout, o)
	if stats.Modules > 0 || len(stats.Skipped) > 0 {
		summary(stderr, stats)
	}
	return err
}

// summary says what a run wrote, and which modules it skipped.
func summary(w io.Writer, s Stats) {
	fmt.Fprintf(w, "index-go: %d modules, %d packages (%d checks), %d documents, %d occurrences, %d symbols, %d bytes in %s; %d packages with list errors, %d type errors\n",
		s.Modules, s.Packages, s.Checked, s.Documents, s.Occurrences, s.Symbols, s.Bytes,
		s.Elapsed.Round(time.Millisecond), s.ListErrors, s.TypeErrors)
	for _, skipped := range s.Skipped {
		fmt.Fprintln(w, "index-go: skipped the module in", skipped)
	}
}

// emitTo runs Emit into file out (stdout when "").
func emitTo(ctx context.Context, out, dir string, patterns []string, stdout io.Writer, o Options) (Stats, error) {
	if out == "" {
		w := bufio.NewWriterSize(stdout, 1<<20)
		stats, err := Emit(ctx, dir, patterns, w, o)
		if ferr := w.Flush(); err == nil && ferr != nil {
			err = fmt.Errorf("index-go: %w", ferr)
		}
		return stats, err
	}
	f, err := os.Create(out)
	if err != nil {
		return Stats{}, fmt.Errorf("index-go: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	stats, err := Emit(ctx, dir, patterns, w, o)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out)
	}
	return stats, err
}
