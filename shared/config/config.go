// Package config reads Toolshed's process-wide settings from environment
// variables (and, for the local server, flags that override them): where
// to listen, which stores, bucket and repository, authentication, rate
// limits, logging. Each is declared once, in settings.go, the way a
// family declares its own (shared/settings), and every one has a default
// that works on a developer's machine with no AWS account. InLambda is the
// one rule for "this process is a deployed Lambda function".
package config

import (
	"log/slog"
	"os"
	"time"

	"github.com/toolshed/toolshed/shared/settings"
)

// Config is every setting (see the declarations in settings.go).
type Config struct {
	Addr           string            // TOOLSHED_ADDR, local listen address (127.0.0.1:8000)
	DataDir        string            // TOOLSHED_DATA_DIR, embedded store directory (.toolshed)
	Store          StoreKind         // TOOLSHED_STORE: StoreBolt (default) or StoreDynamoDB
	Tables         Tables            // TOOLSHED_*_TABLE, DynamoDB table names
	DynamoEndpoint string            // TOOLSHED_DYNAMODB_ENDPOINT, e.g. a local DynamoDB
	Bucket         string            // TOOLSHED_BUCKET, the S3 bucket (snapshots, indexes, workspaces)
	S3Endpoint     string            // TOOLSHED_S3_ENDPOINT, e.g. a local S3 emulator (path-style)
	Repos          []string          // TOOLSHED_REPO_DIR or the -repo flags, "name=path" or a path: the local repositories (the working directory)
	DefaultRepo    string            // TOOLSHED_DEFAULT_REPO, tenant whose snapshot tenants without one read
	RepoRefresh    time.Duration     // TOOLSHED_REPO_REFRESH, how long a snapshot pointer is trusted (5s)
	RepoMaxMB      int               // TOOLSHED_REPO_MAX_MB, largest repository pushed or loaded, in MB of files (DefaultRepoMaxMB)
	RepoCacheMB    int               // TOOLSHED_REPO_CACHE_MB, repository contents kept in memory per process (1024)
	RepoDeny       []string          // TOOLSHED_REPO_DENY, globs the repository tools never read, beyond repo.DefaultDeny
	RepoWatch      Watch             // TOOLSHED_REPO_WATCH: WatchAuto (file-system events) or WatchPoll (stat revalidation)
	RepoPoll       time.Duration     // TOOLSHED_REPO_POLL, how often stat revalidation runs without events (2s)
	HistoryDir     string            // TOOLSHED_HISTORY_DIR, where deployed functions copy pushed histories ("": toolshed-history in os.TempDir)
	RateLimits     map[string]int    // TOOLSHED_RATE_LIMITS, "tool=perMinute,..." overrides
	Auth           AuthMode          // TOOLSHED_AUTH: AuthAuto (default), AuthKeys or AuthOff (loopback only)
	LocalTenant    string            // TOOLSHED_LOCAL_TENANT, tenant when auth is off (local)
	Origins        []string          // TOOLSHED_ALLOWED_ORIGINS, extra browser origins
	PublicURL      string            // TOOLSHED_PUBLIC_URL, the server's public origin (locally: http://<listen address>)
	OAuth          OAuth             // TOOLSHED_OAUTH_*, OAuth access tokens beside API keys (oauth.go)
	Tools          []string          // TOOLSHED_TOOL, the tools a Lambda tool function serves
	ToolFunctions  map[string]string // TOOLSHED_TOOL_FUNCTIONS, gateway: tool → Lambda function
	LogLevel       slog.Level        // TOOLSHED_LOG_LEVEL: debug, info, warn, error
	Metrics        bool              // TOOLSHED_METRICS: write EMF metrics (default on in Lambda)
	// Executable is not a setting: it is the running binary when its
	// subcommands index code precisely (index-go, precise-convert), which
	// the local server's main sets; empty, nothing is indexed precisely (a
	// server built in a test).
	Executable string
}

// InLambda reports whether the process runs as a Lambda function: the
// Lambda runtime gives it the address of its Runtime API, without which
// it could not take an invocation. Every "locally or deployed" default
// asks this one rule.
func InLambda(getenv func(string) string) bool { return getenv("AWS_LAMBDA_RUNTIME_API") != "" }

// DefaultDataDir is the local server's data directory unless configured:
// in the directory it starts in, which is often the repository it serves
// (the repository tools never read it; see repo.Policy).
const DefaultDataDir = ".toolshed"

// DefaultRepoMaxMB is the largest repository, in MB of files (not of its
// zip), that scripts/snapshot pushes and the tools load unless configured:
// five copies of the Go tree (638 MB of files, a 185 MB zip) with room to
// grow. A function whose memory holds less sets its own (shared/tools).
const DefaultRepoMaxMB = 2048

// Tables names the DynamoDB tables.
type Tables struct {
	Tasks, Memory, RateLimits, Access, APIKeys string
}

// Table identifies one of the DynamoDB tables.
type Table string

// The tables.
const (
	TasksTable      Table = "Tasks"
	MemoryTable     Table = "Memory"
	RateLimitsTable Table = "RateLimits"
	AccessTable     Table = "Access"
	APIKeysTable    Table = "ApiKeys"
)

// FromEnv reads the configuration from getenv (os.Getenv in production):
// every setting with its declaration, then the rules that join several.
// The error names every setting refused.
func FromEnv(getenv func(string) string) (Config, error) {
	r := settings.NewReader(getenv)
	c := Config{
		Addr:           settings.Read(r, Addr),
		DataDir:        settings.Read(r, DataDir),
		HistoryDir:     settings.Read(r, HistoryDir),
		Store:          settings.Read(r, Store),
		DynamoEndpoint: settings.Read(r, DynamoEndpoint),
		Bucket:         settings.Read(r, Bucket),
		S3Endpoint:     settings.Read(r, S3Endpoint),
		Auth:           settings.Read(r, Auth),
		LocalTenant:    settings.Read(r, LocalTenant),
		Tools:          settings.Read(r, Tool),
		ToolFunctions:  settings.Read(r, ToolFunctions),
		RateLimits:     settings.Read(r, RateLimits),
		Origins:        settings.Read(r, Origins),
		LogLevel:       settings.Read(r, LogLevel),
		PublicURL:      settings.Read(r, PublicURL),
		OAuth:          readOAuth(r),
		Repos:          settings.Read(r, Repos),
		DefaultRepo:    settings.Read(r, DefaultRepo),
		RepoRefresh:    settings.Read(r, RepoRefresh),
		RepoMaxMB:      settings.Read(r, RepoMaxMB),
		RepoCacheMB:    settings.Read(r, RepoCacheMB),
		RepoDeny:       settings.Read(r, RepoDeny),
		RepoWatch:      settings.Read(r, RepoWatch),
		RepoPoll:       settings.Read(r, RepoPoll),
		Tables: Tables{
			Tasks:      settings.Read(r, TableSettings[TasksTable]),
			Memory:     settings.Read(r, TableSettings[MemoryTable]),
			RateLimits: settings.Read(r, TableSettings[RateLimitsTable]),
			Access:     settings.Read(r, TableSettings[AccessTable]),
			APIKeys:    settings.Read(r, TableSettings[APIKeysTable]),
		},
	}
	c.Metrics = InLambda(getenv)
	if on := settings.Read(r, Metrics); on != nil {
		c.Metrics = *on
	}
	if err := r.Err(); err != nil {
		return c, err
	}
	return c, c.checkOAuth(InLambda(getenv))
}

// Load reads the configuration from the process environment.
func Load() (Config, error) { return FromEnv(os.Getenv) }
