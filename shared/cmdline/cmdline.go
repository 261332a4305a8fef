// Package cmdline reads the command line every Toolshed binary shares:
// -version prints the build's version, -h lists the binary's flags and
// subcommands and names the README section that explains it, and a first
// argument naming a subcommand runs it instead of the binary's own work.
package cmdline

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
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
	// Subcommands are run as `binary NAME args…` (RunSubcommand).
	Subcommands []Subcommand
}

// A Subcommand is work a binary does instead of its own when its first
// argument names it, e.g. `toolshed index-go DIR`: a process another one
// runs with limits, or a tool for developers.
type Subcommand struct {
	Name    string // e.g. "index-go"
	Summary string // what it does, in one line
	// Run runs it with the arguments after its name until ctx is done
	// (SIGINT, SIGTERM); name is how its usage calls it, e.g. "toolshed
	// index-go". Its error ends the process with status 1.
	Run func(ctx context.Context, name string, args []string, stdout, stderr io.Writer) error
}

// RunSubcommand runs the subcommand os.Args[1] names, if any, and ends the
// process; otherwise it returns. Call it first in main.
func (c Command) RunSubcommand() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ran, err := c.subcommand(ctx, filepath.Base(os.Args[0]), os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if !ran {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// subcommand runs the subcommand args[0] names, reporting whether there
// was one.
func (c Command) subcommand(ctx context.Context, binary string, args []string, stdout, stderr io.Writer) (ran bool, err error) {
	if len(args) == 0 {
		return false, nil
	}
	for _, s := range c.Subcommands {
		if s.Name == args[0] {
			return true, s.Run(ctx, binary+" "+s.Name, args[1:], stdout, stderr)
		}
	}
	return false, nil
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
	fmt.Fprintf(out, "%s %s: %s\n\nUsage: %s [flags]\n", c.Name, c.Version, c.Summary, c.Name)
	for _, s := range c.Subcommands {
		fmt.Fprintf(out, "       %s %s ...   %s (%s %s -h lists its flags)\n", c.Name, s.Name, s.Summary, c.Name, s.Name)
	}
	fmt.Fprintln(out)
	fs.PrintDefaults()
	fmt.Fprintf(out, "\nSettings come from the environment (TOOLSHED_*); see %s.\n", c.Readme)
}
