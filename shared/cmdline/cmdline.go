// Package cmdline reads the command line every Toolshed binary shares:
// -version prints the build's version, and -h lists the binary's flags
// and names the README section that explains it.
package cmdline

import (
	"flag"
	"fmt"
	"io"
	"os"
)

// Command describes one binary.
type Command struct {
	Name    string // as it is run, e.g. "gateway"
	Summary string // what it is, in one line
	// Readme is the README section that explains the command and its
	// settings, e.g. "docs/configuration.md".
	Readme string
	// Version is the build's version: main.version, which make sets from
	// git describe (-ldflags -X main.version=...); "dev" without it.
	Version string
}

// Parse reads os.Args into the flags defined on flag.CommandLine, plus
// -version. -version prints the version and -h the usage, and the process
// ends; a flag it does not know ends it with the usage and status 2.
func (c Command) Parse() {
	if c.parse(flag.CommandLine, os.Args[1:], os.Stdout) {
		os.Exit(0)
	}
}

// parse is Parse on fs with args, writing to out. It reports whether the
// command line asked only for information (-version, -h), in which case
// the process should end. With a flag.ContinueOnError fs, -h and bad
// flags come back as true after the usage is written.
func (c Command) parse(fs *flag.FlagSet, args []string, out io.Writer) (done bool) {
	version := fs.Bool("version", false, "print the version and exit")
	fs.SetOutput(out)
	fs.Usage = func() { c.usage(fs, out) }
	if err := fs.Parse(args); err != nil {
		return true
	}
	if *version {
		fmt.Fprintf(out, "%s %s\n", c.Name, c.Version)
		return true
	}
	return false
}

func (c Command) usage(fs *flag.FlagSet, out io.Writer) {
	fmt.Fprintf(out, "%s %s: %s\n\nUsage: %s [flags]\n\n", c.Name, c.Version, c.Summary, c.Name)
	fs.PrintDefaults()
	fmt.Fprintf(out, "\nSettings come from the environment (TOOLSHED_*); see %s.\n", c.Readme)
}
