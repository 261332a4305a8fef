// Command snapshot publishes a repository for the deployed repository
// tools (read_repo_file, read_file, grep_codebase): it packs the files git
// tracks, plus untracked files that are not ignored, with their
// modification times into a zip, uploads it to
// snapshots/<tenant>/<commit>.zip and only then moves
// snapshots/<tenant>/current.json to it, so a reader never sees half a
// snapshot. With -repo NAME it publishes the tenant's repository NAME
// instead, under snapshots/<tenant>/<NAME>/ (-repo default is the
// tenant's default repository, the folder above). list shows a
// repository's snapshots and rollback moves the pointer back. index-go
// writes the SCIP index of the Go code in a directory (shared/goscip).
//
//	go run ./scripts/snapshot -stack Toolshed push -tenant acme [-repo NAME] [-dir .] [-max-mb 2048]
//	go run ./scripts/snapshot -stack Toolshed list -tenant acme [-repo NAME]
//	go run ./scripts/snapshot -stack Toolshed rollback -tenant acme [-repo NAME] [-to COMMIT]
//	go run ./scripts/snapshot index-go [-o FILE] [-tests] DIR [patterns]
//
// The bucket is the SnapshotBucket output of the deployed stack -stack
// names, or TOOLSHED_BUCKET without -stack; credentials and region come
// from the usual AWS settings, and TOOLSHED_S3_ENDPOINT points it at an
// emulator.
//
// A large zip goes up in parts (package objects). An interrupted push
// (Ctrl-C, SIGTERM, a failure) never moves the pointer: stopped during
// the upload it aborts it and leaves no zip; stopped between the zip and
// the pointer it leaves the zip, which list shows without the * and the
// same push run again publishes (a -dirty- commit is named anew by each
// push: its leftover zip stays until deleted). A push killed outright
// (SIGKILL) during the upload leaves an incomplete upload, invisible to
// readers, that the bucket's lifecycle rule aborts a day later.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/goscip"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/stackoutputs"
	"github.com/toolshed/toolshed/shared/wiring"
)

const usage = `usage:
  snapshot [-stack NAME] push -tenant TENANT [-repo REPO] [-dir DIR] [-max-mb N]   publish DIR (default .) as TENANT's repository
  snapshot [-stack NAME] list -tenant TENANT [-repo REPO]                          list its snapshots (* = current)
  snapshot [-stack NAME] rollback -tenant TENANT [-repo REPO] [-to COMMIT]         point it at COMMIT (default: the previous snapshot)
  snapshot index-go [-o FILE] [-tests] DIR [patterns]                              write the SCIP index of the Go code in DIR (-h: its flags)

-repo REPO names one of the tenant's repositories (default: its default
repository, which tenants without one read from the deployment's default).

-stack NAME uses the bucket of that deployed stack (its SnapshotBucket
output; needs AWS credentials and its region); without it, TOOLSHED_BUCKET.`

func main() {
	// Interrupted, a push aborts its upload before it exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "snapshot:", err)
		os.Exit(1)
	}
}

// run reads -stack, the configuration (pointed at that stack) and runs
// the command.
func run(ctx context.Context, args []string, out io.Writer) error {
	global := flag.NewFlagSet("snapshot", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	stack := global.String("stack", "", "the deployed stack whose bucket to use")
	if err := global.Parse(args); err != nil {
		return errors.New(usage)
	}
	if rest := global.Args(); len(rest) > 0 && rest[0] == "index-go" {
		return goscip.Command(ctx, "snapshot index-go", rest[1:], out, os.Stderr)
	}
	cfg, err := stackoutputs.Config(ctx, *stack, os.Getenv)
	if err != nil {
		return err
	}
	if cfg.Bucket == "" {
		return errors.New("no bucket: name the deployed stack (-stack Toolshed) or set TOOLSHED_BUCKET")
	}
	args = global.Args()
	bucket, err := wiring.NewEnv(cfg, nil).S3(ctx)
	if err != nil {
		return err
	}
	return command(ctx, bucket, settings{MaxMB: cfg.RepoMaxMB, DataDir: cfg.DataDir, Deny: cfg.RepoDeny}, args, out, time.Now)
}

// settings are what push takes from the configuration.
type settings struct {
	MaxMB   int      // the default size limit (TOOLSHED_REPO_MAX_MB)
	DataDir string   // the local server's data directory, never pushed (TOOLSHED_DATA_DIR)
	Deny    []string // more paths never pushed (TOOLSHED_REPO_DENY)
}

// command runs one subcommand against the bucket.
func command(ctx context.Context, bucket *objects.Bucket, s settings, args []string, out io.Writer, now func() time.Time) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	owner := fs.String("tenant", "", "the tenant whose repository this is")
	name := fs.String("repo", reposcope.Default, "the repository's name")
	dir := fs.String("dir", ".", "push: the repository's directory (a git checkout)")
	max := fs.Int("max-mb", s.MaxMB, "push: refuse repositories whose files total more than this many MB")
	to := fs.String("to", "", "rollback: the commit to point at")
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 0 {
		return errors.New(usage)
	}
	r := reposcope.Ref{Tenant: *owner, Name: *name}
	if err := r.Check(); err != nil {
		return fmt.Errorf("%w\n%s", err, usage)
	}
	switch args[0] {
	case "push":
		return push(ctx, bucket, r, *dir, int64(*max)<<20, s, out, now())
	case "list":
		list, err := repo.List(ctx, bucket, r)
		if err != nil {
			return err
		}
		if len(list) == 0 {
			fmt.Fprintf(out, "%s has no snapshots\n", r)
			return nil
		}
		w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
		fmt.Fprintln(w, "\tCOMMIT\tZIP BYTES\tUPLOADED")
		for _, s := range list {
			mark := ""
			if s.Current {
				mark = "*"
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", mark, s.Commit, s.ZipBytes, s.Modified.UTC().Format(time.RFC3339))
		}
		return w.Flush()
	case "rollback":
		p, err := repo.Rollback(ctx, bucket, r, *to, now())
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s now reads commit %s (%d files, %d bytes)\n", r, p.Commit, p.Files, p.Bytes)
		return nil
	default:
		return errors.New(usage)
	}
}

// push publishes the checkout at dir, without what the repository policy
// refuses (secrets and keys by name, TOOLSHED_REPO_DENY), without the
// files whose content holds a secret (repo.Pack leaves them out) and
// without a local server's data directory: the configured one, and
// .toolshed at the root.
func push(ctx context.Context, bucket *objects.Bucket, r reposcope.Ref, dir string, maxBytes int64, s settings, out io.Writer, now time.Time) error {
	listed, err := git(dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return err
	}
	deny, err := repo.ParseDeny(append([]string{"/" + config.DefaultDataDir}, s.Deny...))
	if err != nil {
		return err
	}
	policy, err := repo.LocalPolicy(dir, s.DataDir, deny)
	if err != nil {
		return err
	}
	var paths, refused []string
	for _, p := range strings.Split(listed, "\x00") {
		switch {
		case p == "":
		case policy.Check(p) != nil:
			refused = append(refused, p)
		default:
			paths = append(paths, p)
		}
	}
	commit, err := commitID(dir, now)
	if err != nil {
		return err
	}
	pub, err := repo.Publish(ctx, bucket, repo.PublishInput{
		Repo: r, Commit: commit, Dir: dir, Paths: paths, MaxBytes: maxBytes, Now: now,
	})
	if err != nil {
		return err
	}
	p := pub.Pointer
	fmt.Fprintf(out, "pushed %s for %s: commit %s, %d files, %d bytes (zip %d bytes)\n", p.Key, r, p.Commit, p.Files, p.Bytes, p.ZipBytes)
	if len(refused) > 0 {
		fmt.Fprintf(out, "left out %d files the repository tools never read (secrets and keys, the server's data directory, TOOLSHED_REPO_DENY): %s\n",
			len(refused), strings.Join(refused[:min(len(refused), 10)], ", ")+map[bool]string{true: ", …", false: ""}[len(refused) > 10])
	}
	if len(pub.Refused) > 0 {
		fmt.Fprintf(out, "left out %d files whose content holds a secret (a private key, a credential): %s\n",
			len(pub.Refused), strings.Join(pub.Refused, ", "))
	}
	if len(pub.Skipped) > 0 {
		fmt.Fprintf(out, "skipped %d paths that are not regular files (symbolic links, submodules) or are missing: %s\n",
			len(pub.Skipped), strings.Join(pub.Skipped, ", "))
	}
	if pub.RetireErr != nil {
		fmt.Fprintf(out, "warning: the previous snapshot was not tagged retired, so it will not expire: %v\n", pub.RetireErr)
	}
	return nil
}

// commitID is HEAD's commit, with "-dirty-<time>" when the working tree
// has changes (so each such push gets its own zip).
func commitID(dir string, now time.Time) (string, error) {
	head, err := git(dir, "rev-parse", "HEAD")
	if err != nil {
		return "", fmt.Errorf("%w (push needs a commit)", err)
	}
	status, err := git(dir, "status", "--porcelain")
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(head)
	if strings.TrimSpace(status) != "" {
		id += "-dirty-" + now.UTC().Format("20060102T150405Z")
	}
	return id, nil
}

// git runs git in dir and returns its standard output.
func git(dir string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s in %s: %v: %s", args[0], dir, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
