// Package wiring assembles a Toolshed process from its parts: the Env, a
// lazy container of what tools are built from (settings, logger, clock,
// storage, AWS clients, the bucket, the served repository and its symbol
// tables), opened on first use and shared by every family of the process; and Pipeline, the
// pipeline over the built tools with their contracts, rate limits and
// telemetry. Each functions/<name>/main.go wires its process with it.
//
// The Env alone chooses backends: local or in the bucket, for the stores
// (Stores; the embedded one through shared/wiring/embedded), the served
// repository (Repo), file-io's workspaces (Workspaces) and
// context_search's indexes (CodeIndexes); where precise indexes come from
// (PreciseIndexes: the local server hands over its own); and where the
// key of the paging cursors comes from (Cursors). A family asks for what it needs and never
// looks at the configuration to decide where it lives.
package wiring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/toolshed/toolshed/shared/awscall"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/objects"
	"github.com/toolshed/toolshed/shared/precisebucket"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
	"github.com/toolshed/toolshed/shared/symbols"
)

// Env is what a family's constructor may use: the settings, a logger, the
// clock, and clients that are built on first use and then shared by every
// family of the process. A function that never asks for the stores never
// opens them.
type Env struct {
	Config config.Config
	Log    *slog.Logger
	Now    func() time.Time
	// Getenv reads the tools' own settings (see shared/settings):
	// os.Getenv unless a test says otherwise.
	Getenv func(string) string

	mu      sync.Mutex
	openMu  sync.Mutex // held while the stores are opened (which may load the AWS config)
	stores  *store.Stores
	aws     *aws.Config
	s3      *objects.Bucket
	sqs     *sqs.Client
	repo    repo.Source
	symbols *symbols.Tables // SymbolTables
	precise PreciseKeeper   // KeepPreciseIndexes; nil: none kept in process
	cursors *cursor.Key
	// histories and trees answer Histories and Trees (history.go).
	histories githistory.Histories
	trees     *githistory.Trees
	closers   []func() error
	status    map[string]func([]string) any
	// repoIndexes answers RepoIndex (repoindex.go); nil: the bucket's.
	repoIndexes RepoIndexes
	warming     sync.WaitGroup // the warm-ups started (WarmDefaultRepo)
	warmCtx     context.Context
	stopWarming context.CancelFunc // ends warmCtx, the warm-ups' (nil: none started)

	// preciseBucket reads the bucket's precise indexes (PreciseIndexes).
	preciseBucket *precisebucket.Reader
}

// NewEnv returns an Env over cfg. A nil log discards; Now is time.Now.
func NewEnv(cfg config.Config, log *slog.Logger) *Env {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Env{Config: cfg, Log: log, Now: time.Now, Getenv: os.Getenv}
}

// Serves reports whether the process serves tool: a tool's Lambda
// function serves those TOOLSHED_TOOL names (Config.Tools), the local
// server every tool. A family asks it before it reads what only some of
// its tools need (see family.Only).
func (e *Env) Serves(tool string) bool {
	return len(e.Config.Tools) == 0 || slices.Contains(e.Config.Tools, tool)
}

// UseStores makes env hand out st instead of connecting to DynamoDB (the
// embedded store a process has opened, or a test's); release, when not
// nil, runs at Close after everything registered with OnClose since.
func (e *Env) UseStores(st store.Stores, release func() error) *Env {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stores = &st
	if release != nil {
		e.closers = append(e.closers, release)
	}
	return e
}

// Stores returns the stores: those given to UseStores, or else DynamoDB
// (TOOLSHED_STORE=dynamodb), connected on first use. The embedded bolt
// file is opened by the processes that use it (the local server, the
// apikeys script, through shared/wiring/embedded) and handed over with
// UseStores, so that no Lambda function links it.
func (e *Env) Stores(ctx context.Context) (store.Stores, error) {
	e.openMu.Lock()
	defer e.openMu.Unlock()
	e.mu.Lock()
	opened := e.stores
	e.mu.Unlock()
	if opened != nil {
		return *opened, nil
	}
	if e.Config.Store != config.StoreDynamoDB {
		return store.Stores{}, fmt.Errorf("open storage: %s=%q is opened by the process (boltstore.OpenIn); this one connects to %s only",
			config.Store.Name(), e.Config.Store, config.StoreDynamoDB)
	}
	awsCfg, err := e.AWS(ctx)
	if err != nil {
		return store.Stores{}, fmt.Errorf("open storage: %w", err)
	}
	st := dynamostore.Connect(awsCfg, e.Config)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stores = &st
	return st, nil
}

// AWS loads the AWS SDK configuration on first use, with every call
// bounded (awscall.LoadConfig).
func (e *Env) AWS(ctx context.Context) (aws.Config, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.aws != nil {
		return *e.aws, nil
	}
	c, err := awscall.LoadConfig(ctx)
	if err != nil {
		return aws.Config{}, err
	}
	e.aws = &c
	return c, nil
}

// S3 returns the deployment's bucket (TOOLSHED_BUCKET), with its client
// built on first use. TOOLSHED_S3_ENDPOINT points it at an emulator, with
// path-style addressing.
func (e *Env) S3(ctx context.Context) (*objects.Bucket, error) {
	if e.Config.Bucket == "" {
		return nil, fmt.Errorf("%s is not set: it names the S3 bucket", config.Bucket.Name())
	}
	e.mu.Lock()
	b := e.s3
	e.mu.Unlock()
	if b != nil {
		return b, nil
	}
	cfg, err := e.AWS(ctx)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.s3 == nil {
		e.s3 = objects.New(objects.NewClient(cfg, e.Config.S3Endpoint), e.Config.Bucket)
	}
	return e.s3, nil
}

// SQS returns an SQS client, built on first use (the indexer's queue).
// AWS_ENDPOINT_URL_SQS points it at an emulator.
func (e *Env) SQS(ctx context.Context) (*sqs.Client, error) {
	cfg, err := e.AWS(ctx)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sqs == nil {
		e.sqs = sqs.NewFromConfig(cfg)
	}
	return e.sqs, nil
}

// RepoPolicy is the repository policy of S3 snapshots: repo.DefaultDeny
// and TOOLSHED_REPO_DENY.
func (e *Env) RepoPolicy() (*repo.Policy, error) {
	deny, err := repo.ParseDeny(e.Config.RepoDeny)
	if err != nil {
		return nil, err
	}
	return repo.NewPolicy(deny, "")
}

// Repo returns the repository source on first use, shared by every family
// of the process: S3 snapshots when TOOLSHED_BUCKET is set (with
// TOOLSHED_DEFAULT_REPO as the fallback), otherwise the local directories
// of TOOLSHED_REPO_DIR or the -repo flags (Config.Repos; the working
// directory when empty), each as one live view.
// Either way the repository policy (repo.DefaultDeny, TOOLSHED_REPO_DENY
// and, locally, the data directory) applies to every view.
func (e *Env) Repo(ctx context.Context) (repo.Source, error) {
	e.mu.Lock()
	src := e.repo
	e.mu.Unlock()
	if src != nil {
		return src, nil
	}
	if e.Config.Bucket != "" {
		bucket, err := e.S3(ctx)
		if err != nil {
			return nil, err
		}
		policy, err := e.RepoPolicy()
		if err != nil {
			return nil, err
		}
		src = repo.NewS3(bucket, repo.S3Options{
			Log:         e.Log,
			DefaultRepo: e.Config.DefaultRepo,
			Refresh:     e.Config.RepoRefresh,
			MaxBytes:    int64(e.Config.RepoMaxMB) << 20,
			CacheBytes:  int64(e.Config.RepoCacheMB) << 20,
			Now:         e.Now,
			Policy:      policy,
		})
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.repo != nil {
		return e.repo, nil
	}
	if src == nil {
		local, err := e.localRepos()
		if err != nil {
			return nil, err
		}
		src = local
	}
	e.repo = src
	return src, nil
}

// localRepos opens the local repositories (repo.LocalRepos), each a live
// view closed with the Env. The caller holds e.mu.
func (e *Env) localRepos() (repo.Shared, error) {
	deny, err := repo.ParseDeny(e.Config.RepoDeny)
	if err != nil {
		return repo.Shared{}, err
	}
	dirs, err := repo.LocalRepos(e.Config.Repos)
	if err != nil {
		return repo.Shared{}, err
	}
	var views []repo.Named
	for _, d := range dirs {
		policy, err := repo.LocalPolicy(d.Dir, e.Config.DataDir, deny)
		if err != nil {
			return repo.Shared{}, err
		}
		local, err := repo.NewLocal(d.Dir, repo.LocalOptions{
			Policy:     policy,
			CacheBytes: int64(e.Config.RepoCacheMB) << 20,
			Watch:      e.Config.RepoWatch,
			Poll:       e.Config.RepoPoll,
			Log:        e.Log,
		})
		if err != nil {
			return repo.Shared{}, fmt.Errorf("repository %s: %w", d.Name, err)
		}
		e.closers = append(e.closers, local.Close)
		views = append(views, repo.Named{Name: d.Name, View: local})
	}
	return repo.Shared{View: views[0].View, Name: views[0].Name, Others: views[1:]}, nil
}

// warmTimeout bounds one warm-up in a process that never calls WaitWarm
// (the local server, which is never frozen).
const warmTimeout = 5 * time.Minute

// WarmDefaultRepo starts, beside the rest of a function's init, work it
// would otherwise do in its first calls on the deployment's default
// repository (TOOLSHED_DEFAULT_REPO's default repository, when snapshots
// come from the bucket): reading its snapshot or its code index, building
// its symbol table. what names it in the log. WaitWarm bounds it: fn's ctx
// ends when WaitWarm stops waiting, and what fn has not done by then the
// first calls do, for nothing may go on after the init (Lambda freezes a
// function between its invocations).
func (e *Env) WarmDefaultRepo(what string, fn func(ctx context.Context, r reposcope.Ref) error) {
	if e.Config.Bucket == "" || e.Config.DefaultRepo == "" {
		return
	}
	r := reposcope.DefaultOf(e.Config.DefaultRepo)
	e.mu.Lock()
	if e.stopWarming == nil {
		e.warmCtx, e.stopWarming = context.WithTimeout(context.Background(), warmTimeout)
	}
	ctx := e.warmCtx
	e.mu.Unlock()
	e.warming.Go(func() {
		start := time.Now()
		if err := fn(ctx, r); err != nil {
			e.Log.Warn("warm-up stopped; the first calls go on with it", "what", what, "repo", e.Config.DefaultRepo, "error", err)
			return
		}
		e.Log.Info("warm-up done", "what", what, "repo", e.Config.DefaultRepo, "duration_ms", time.Since(start).Milliseconds())
	})
}

// WaitWarm waits for the warm-ups started, at most d, then stops what is
// left of them and waits until they have stopped; it reports whether they
// were done within d.
func (e *Env) WaitWarm(d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		e.warming.Wait()
		close(done)
	}()
	var finished bool
	select {
	case <-done:
		finished = true
	case <-time.After(d):
	}
	e.mu.Lock()
	stop := e.stopWarming
	e.mu.Unlock()
	if stop != nil {
		stop()
	}
	<-done
	return finished
}

// OnClose registers fn to run when the Env closes, before the stores it
// opened are released (a family's background work, say).
func (e *Env) OnClose(fn func() error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closers = append(e.closers, fn)
}

// ReportStatus adds what fn returns to the server's status (GET /healthz
// locally, to a caller whose credential is accepted) under name: a
// family's background work, say, for operators. fn says only what a
// caller limited to the repositories repos (nil: every one) may see of
// them.
func (e *Env) ReportStatus(name string, fn func(repos []string) any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.status == nil {
		e.status = map[string]func([]string) any{}
	}
	e.status[name] = fn
}

// Status returns what the families report (see ReportStatus) to a caller
// limited to the repositories repos (nil: every one), by name.
func (e *Env) Status(repos []string) map[string]any {
	e.mu.Lock()
	fns := maps.Clone(e.status)
	e.mu.Unlock()
	out := make(map[string]any, len(fns))
	for name, fn := range fns {
		out[name] = fn(repos)
	}
	return out
}

// Close runs what was registered with OnClose and releases what the Env
// opened, last first.
func (e *Env) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var errs []error
	for i := len(e.closers) - 1; i >= 0; i-- {
		errs = append(errs, e.closers[i]())
	}
	e.closers = nil
	return errors.Join(errs...)
}
