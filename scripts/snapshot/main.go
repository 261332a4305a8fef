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
// push also pushes the repository's precise indexes (SCIP files beside
// the zip, named by the pointer, which the deployed indexer converts for
// the navigation tools): it runs the indexers of the projects it finds
// (shared/sciprun: the Go emitter as this binary's own index-go, the
// TypeScript and Python indexers from the Toolshed checkout's
// node_modules; -index=false runs none) and takes SCIP files made
// elsewhere, in CI say, with -scip FILE (repeated), each checked first as
// the indexer will convert it: refused when it is not SCIP, is too large
// or names no file of the snapshot. The precise indexes together are
// bounded by -max-mb too.
//
// push also uploads, before the snapshot, the git history of the commit
// it was made from (HEAD; of a working tree with changes too) for the
// history tools (githistory.Push; docs/history.md): under
// history/<tenant>[/<repo>]/ a pack git makes of the commits the bucket
// lacks, and a manifest naming every pack, written last. The first push
// uploads every commit reachable from HEAD (git.git, 82k commits: one
// 307 MB pack, 14.5 s) unless -history-depth N (commits) or -history-since DATE
// bounds it; each later push uploads only what is new since the commits
// uploaded before. -history=false pushes the snapshot without it. Nothing
// under history/ is ever deleted.
//
//	go run ./scripts/snapshot -stack Toolshed push -tenant acme [-repo NAME] [-dir .] [-max-mb 2048] [-index=false] [-scip FILE]... [-history=false] [-history-depth N] [-history-since DATE]
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
	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/goscip"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/sciprun"
	"github.com/toolshed/toolshed/shared/stackoutputs"
	"github.com/toolshed/toolshed/shared/wiring"
)

const usage = `usage:
  snapshot [-stack NAME] push -tenant TENANT [-repo REPO] [-dir DIR] [-max-mb N] [-index=false] [-scip FILE]...
                              [-history=false] [-history-depth N] [-history-since DATE]
                                                                                   publish DIR (default .) as TENANT's repository
  snapshot [-stack NAME] list -tenant TENANT [-repo REPO]                          list its snapshots (* = current)
  snapshot [-stack NAME] rollback -tenant TENANT [-repo REPO] [-to COMMIT]         point it at COMMIT (default: the previous snapshot)
  snapshot index-go [-o FILE] [-tests] DIR [patterns]                              write the SCIP index of the Go code in DIR (-h: its flags)

-repo REPO names one of the tenant's repositories (default: its default
repository, which tenants without one read from the deployment's default).

push runs the precise indexers of the projects it finds (Go modules,
TypeScript/JavaScript and Python projects) and pushes their SCIP indexes
with the snapshot; -index=false runs none. -scip FILE (repeated) pushes a
SCIP index made elsewhere, such as in CI, whose paths are relative to the
folder its metadata names when that is in DIR, else to DIR.

push uploads the git history of HEAD for the history tools: all of it the
first time, only what is new after. -history-depth N (commits) and
-history-since DATE (2006-01-02) bound it; -history=false skips it.

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
	nm, err := config.NodeModules.Get(os.Getenv)
	if err != nil {
		return err
	}
	return command(ctx, bucket, settings{MaxMB: cfg.RepoMaxMB, DataDir: cfg.DataDir, Deny: cfg.RepoDeny, NodeModules: nm}, args, out, time.Now)
}

// settings are what push takes from the configuration.
type settings struct {
	MaxMB   int      // the default size limit (TOOLSHED_REPO_MAX_MB)
	DataDir string   // the local server's data directory, never pushed (TOOLSHED_DATA_DIR)
	Deny    []string // more paths never pushed (TOOLSHED_REPO_DENY)
	// NodeModules is where the npm indexers are (TOOLSHED_NODE_MODULES;
	// "": found as nodeModules says).
	NodeModules string
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
	index := fs.Bool("index", true, "push: run the precise indexers of the projects found")
	history := fs.Bool("history", true, "push: upload the history of the commit pushed too")
	depth := fs.Int("history-depth", 0, "push: upload at most this many commits of history (0: all)")
	since := fs.String("history-since", "", "push: upload no commit older than this date (2006-01-02, or RFC 3339)")
	var uploads []string
	fs.Func("scip", "push: a SCIP index made elsewhere to push with the snapshot (repeated)", func(v string) error {
		uploads = append(uploads, v)
		return nil
	})
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
		o := pushOptions{dir: *dir, maxBytes: int64(*max) << 20, index: *index, uploads: uploads, history: *history}
		var err error
		if o.bound, err = bound(*depth, *since); err != nil {
			return fmt.Errorf("%w\n%s", err, usage)
		}
		return push(ctx, bucket, r, o, s, out, now())
	case "list":
		return list(ctx, bucket, r, out)
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

// pushOptions are push's flags.
type pushOptions struct {
	dir      string
	maxBytes int64
	index    bool             // run the precise indexers
	uploads  []string         // -scip files
	history  bool             // upload the history
	bound    githistory.Bound // of the history
}

// bound is the history's bound the flags say.
func bound(depth int, since string) (githistory.Bound, error) {
	b := githistory.Bound{Depth: depth}
	if depth < 0 {
		return b, fmt.Errorf("-history-depth %d: give a number of commits, or 0 for all", depth)
	}
	if since == "" {
		return b, nil
	}
	for _, layout := range []string{time.DateOnly, time.RFC3339} {
		if t, err := time.Parse(layout, since); err == nil {
			b.Since = t
			return b, nil
		}
	}
	return b, fmt.Errorf("-history-since %q: give a date, 2006-01-02 or RFC 3339", since)
}

// push publishes the checkout at dir, without what the repository policy
// refuses (secrets and keys by name, TOOLSHED_REPO_DENY), without the
// files whose content holds a secret (repo.Pack leaves them out) and
// without a local server's data directory: the configured one, and
// .toolshed at the root; with its precise indexes (precisePush).
func push(ctx context.Context, bucket *objects.Bucket, r reposcope.Ref, o pushOptions, s settings, out io.Writer, now time.Time) error {
	paths, refused, err := pushed(o.dir, s)
	if err != nil {
		return err
	}
	head, commit, err := commitID(o.dir, now)
	if err != nil {
		return err
	}
	var history strings.Builder // said after the snapshot
	if err := pushHistory(ctx, bucket, r, head, o, &history, now); err != nil {
		return err
	}
	pp, err := newPrecisePush(r, commit, o, s, out)
	if err != nil {
		return err
	}
	defer os.RemoveAll(pp.tmp)
	pub, err := repo.Publish(ctx, bucket, repo.PublishInput{
		Repo: r, Commit: commit, Git: head, Dir: o.dir, Paths: paths, MaxBytes: o.maxBytes, Now: now, Precise: pp.files, Policy: pp.policy,
	})
	if err != nil {
		return err
	}
	p := pub.Pointer
	fmt.Fprintf(out, "pushed %s for %s: commit %s, %d files, %d bytes (zip %d bytes)\n", p.Key, r, p.Commit, p.Files, p.Bytes, p.ZipBytes)
	fmt.Fprint(out, history.String())
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
	printPrecise(out, p.Precise)
	return nil
}

// pushed returns the files of the checkout at dir that git lists (tracked,
// and untracked but not ignored) that are pushed, and those the policy
// refuses.
func pushed(dir string, s settings) (paths, refused []string, err error) {
	listed, err := git(dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return nil, nil, err
	}
	deny, err := repo.ParseDeny(append([]string{"/" + config.DefaultDataDir}, s.Deny...))
	if err != nil {
		return nil, nil, err
	}
	policy, err := repo.LocalPolicy(dir, s.DataDir, deny)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range strings.Split(listed, "\x00") {
		switch {
		case p == "":
		case policy.Check(p) != nil:
			refused = append(refused, p)
		default:
			paths = append(paths, p)
		}
	}
	return paths, refused, nil
}

// newPrecisePush prepares what makes a push's precise indexes: the
// indexers run as this binary's index-go (Go; its symbols stamped with
// the commit) and from the Toolshed checkout's node_modules, on the
// snapshot as the deployed tools read it (TOOLSHED_REPO_DENY's policy).
func newPrecisePush(r reposcope.Ref, commit string, o pushOptions, s settings, out io.Writer) (*precisePush, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	deny, err := repo.ParseDeny(s.Deny)
	if err != nil {
		return nil, err
	}
	policy, err := repo.NewPolicy(deny, "")
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "toolshed-precise-*")
	if err != nil {
		return nil, err
	}
	return &precisePush{dir: o.dir, commit: commit, tenant: r.Tenant, maxBytes: o.maxBytes, index: o.index, uploads: o.uploads,
		policy: policy, tmp: tmp, out: out,
		runner: sciprun.Runner{GoIndexer: []string{exe, "index-go", "-tests", "-module-version", commit}, NodeModules: nodeModules(s.NodeModules)}}, nil
}

// printPrecise says what precise indexes a push pushed.
func printPrecise(out io.Writer, indexes []repo.PreciseIndex) {
	if len(indexes) == 0 {
		fmt.Fprintln(out, "no precise index was pushed: the navigation tools answer this snapshot by search")
		return
	}
	for _, x := range indexes {
		what := x.Language
		if what == "" {
			what = strings.Join(x.Languages, ", ")
		}
		if x.Key == "" {
			fmt.Fprintf(out, "precise index of %s (%s): none, %s\n", x.Root, what, x.Reason)
			continue
		}
		fmt.Fprintf(out, "precise index of %s (%s, %s): %s, %d bytes; the indexer converts it\n", x.Root, what, x.Indexer, x.Key, x.Bytes)
	}
}

// list prints the repository's snapshots, newest first, with the SCIP
// files beside each, and the precise indexes of the current one.
func list(ctx context.Context, bucket *objects.Bucket, r reposcope.Ref, out io.Writer) error {
	snaps, err := repo.List(ctx, bucket, r)
	if err != nil {
		return err
	}
	if len(snaps) == 0 {
		fmt.Fprintf(out, "%s has no snapshots\n", r)
		return nil
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "\tCOMMIT\tZIP BYTES\tUPLOADED\tSCIP FILES")
	for _, s := range snaps {
		mark, scip := "", "-"
		if s.Current {
			mark = "*"
		}
		if len(s.SCIP) > 0 {
			var bytes int64
			for _, o := range s.SCIP {
				bytes += o.Size
			}
			scip = fmt.Sprintf("%d (%d bytes)", len(s.SCIP), bytes)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", mark, s.Commit, s.ZipBytes, s.Modified.UTC().Format(time.RFC3339), scip)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	p, ok, err := repo.ReadPointer(ctx, bucket, r)
	if err != nil || !ok {
		return err
	}
	fmt.Fprintln(out, "the current snapshot's precise indexes:")
	printPrecise(out, p.Precise)
	return nil
}

// commitID returns HEAD's commit, and the snapshot's name: HEAD's
// commit, with "-dirty-<time>" when the working tree has changes (so each
// such push gets its own zip).
func commitID(dir string, now time.Time) (head, id string, err error) {
	out, err := git(dir, "rev-parse", "HEAD")
	if err != nil {
		return "", "", fmt.Errorf("%w (push needs a commit)", err)
	}
	status, err := git(dir, "status", "--porcelain")
	if err != nil {
		return "", "", err
	}
	head = strings.TrimSpace(out)
	id = head
	if strings.TrimSpace(status) != "" {
		id += "-dirty-" + now.UTC().Format("20060102T150405Z")
	}
	return head, id, nil
}

// pushHistory uploads the history of head that the bucket lacks (all of
// it on the first push, within the bound) and says what it uploaded.
func pushHistory(ctx context.Context, bucket *objects.Bucket, r reposcope.Ref, head string, o pushOptions, out io.Writer, now time.Time) error {
	if !o.history {
		fmt.Fprintln(out, "history: not pushed (-history=false): the history tools answer that this snapshot has none")
		return nil
	}
	started := time.Now()
	pushed, err := githistory.Push(ctx, bucket, githistory.PushInput{Repo: r, Dir: o.dir, Commit: head, Bound: o.bound, Now: now})
	if err != nil {
		return fmt.Errorf("push the history (-history=false pushes the snapshot without it): %w", err)
	}
	m := pushed.Manifest
	if pushed.Pack == nil {
		fmt.Fprintf(out, "history: %s is uploaded already (%d commits in %d packs); refs updated\n", head, m.Commits, len(m.Packs))
		return nil
	}
	p := pushed.Pack
	what := "every commit reachable from it"
	if o.bound != (githistory.Bound{}) {
		what = "the commits within -history-depth/-history-since"
	}
	fmt.Fprintf(out, "history: uploaded %s: %d new commits, %d bytes (index %d bytes) in %s; %d commits in %d packs in all\n",
		githistory.PackKey(r, p.Name, ".pack"), p.Commits, p.Bytes, p.IdxBytes, time.Since(started).Round(time.Millisecond), m.Commits, len(m.Packs))
	fmt.Fprintf(out, "history: it holds %s", what)
	if len(m.Shallow) > 0 {
		fmt.Fprintf(out, "; it stops at %d commits whose parents are not uploaded (blame marks their lines boundary)", len(m.Shallow))
	}
	fmt.Fprintln(out, "; bound it with -history-depth N or -history-since DATE, skip it with -history=false")
	return nil
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
