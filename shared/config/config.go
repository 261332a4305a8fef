// Package config reads Toolshed's process-wide settings from environment
// variables (and, for the local server, flags that override them): where
// to listen, which stores, bucket and repository, authentication, rate
// limits, logging. Every setting has a default that works on a developer's
// machine with no AWS account. A tool's own settings are declared in its
// package (shared/settings).
package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/tenant"
)

// Config is every setting.
type Config struct {
	Addr           string            // TOOLSHED_ADDR, local listen address (127.0.0.1:8000)
	DataDir        string            // TOOLSHED_DATA_DIR, embedded store directory (.toolshed)
	Store          string            // TOOLSHED_STORE: "bolt" (default) or "dynamodb"
	Tables         Tables            // TOOLSHED_*_TABLE, DynamoDB table names
	DynamoEndpoint string            // TOOLSHED_DYNAMODB_ENDPOINT, e.g. a local DynamoDB
	Bucket         string            // TOOLSHED_BUCKET, the S3 bucket (snapshots, indexes, workspaces)
	S3Endpoint     string            // TOOLSHED_S3_ENDPOINT, e.g. a local S3 emulator (path-style)
	RepoDir        string            // TOOLSHED_REPO_DIR, the repository served locally (the working directory)
	Repos          []string          // the local server's -repo flags, "name=path" or a path: its repositories (none: RepoDir alone)
	DefaultRepo    string            // TOOLSHED_DEFAULT_REPO, tenant whose snapshot tenants without one read
	RepoRefresh    time.Duration     // TOOLSHED_REPO_REFRESH, how long a snapshot pointer is trusted (5s)
	RepoMaxMB      int               // TOOLSHED_REPO_MAX_MB, largest repository pushed or loaded, in MB of files (DefaultRepoMaxMB)
	RepoCacheMB    int               // TOOLSHED_REPO_CACHE_MB, repository contents kept in memory per process (1024)
	RepoDeny       []string          // TOOLSHED_REPO_DENY, globs the repository tools never read, beyond repo.DefaultDeny
	RepoWatch      string            // TOOLSHED_REPO_WATCH: auto (file-system events) or poll (stat revalidation)
	RepoPoll       time.Duration     // TOOLSHED_REPO_POLL, how often stat revalidation runs without events (2s)
	RateLimits     map[string]int    // TOOLSHED_RATE_LIMITS, "tool=perMinute,..." overrides
	Auth           string            // TOOLSHED_AUTH: "auto" (default), "keys" or "off" (loopback only)
	LocalTenant    string            // TOOLSHED_LOCAL_TENANT, tenant when auth is off (local)
	Origins        []string          // TOOLSHED_ALLOWED_ORIGINS, extra browser origins
	PublicURL      string            // TOOLSHED_PUBLIC_URL, the server's public origin (locally: http://<listen address>)
	OAuth          OAuth             // TOOLSHED_OAUTH_*, OAuth access tokens beside API keys (oauth.go)
	Tool           string            // TOOLSHED_TOOL, the tool a Lambda tool function serves
	ToolFunctions  map[string]string // TOOLSHED_TOOL_FUNCTIONS, gateway: tool → Lambda function
	LogLevel       slog.Level        // TOOLSHED_LOG_LEVEL: debug, info, warn, error
	Metrics        bool              // TOOLSHED_METRICS: write EMF metrics (default on in Lambda)
}

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

// TableVars maps each table to the environment variable carrying its name.
var TableVars = map[Table]string{
	TasksTable:      "TOOLSHED_TASKS_TABLE",
	MemoryTable:     "TOOLSHED_MEMORY_TABLE",
	RateLimitsTable: "TOOLSHED_RATE_TABLE",
	AccessTable:     "TOOLSHED_ACCESS_TABLE",
	APIKeysTable:    "TOOLSHED_APIKEYS_TABLE",
}

// FromEnv reads the configuration from getenv (os.Getenv in production).
func FromEnv(getenv func(string) string) (Config, error) {
	get := func(k, def string) string {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
		return def
	}
	inLambda := getenv("AWS_LAMBDA_FUNCTION_NAME") != ""
	c := Config{
		Addr:           get("TOOLSHED_ADDR", "127.0.0.1:8000"),
		DataDir:        get("TOOLSHED_DATA_DIR", DefaultDataDir),
		Store:          get("TOOLSHED_STORE", "bolt"),
		DynamoEndpoint: get("TOOLSHED_DYNAMODB_ENDPOINT", ""),
		Bucket:         get("TOOLSHED_BUCKET", ""),
		S3Endpoint:     get("TOOLSHED_S3_ENDPOINT", ""),
		Auth:           get("TOOLSHED_AUTH", "auto"),
		LocalTenant:    get("TOOLSHED_LOCAL_TENANT", "local"),
		Tool:           get("TOOLSHED_TOOL", ""),
		RepoDir:        get("TOOLSHED_REPO_DIR", "."),
		DefaultRepo:    get("TOOLSHED_DEFAULT_REPO", ""),
		Tables: Tables{
			Tasks:      get(TableVars[TasksTable], "toolshed-tasks"),
			Memory:     get(TableVars[MemoryTable], "toolshed-memory"),
			RateLimits: get(TableVars[RateLimitsTable], "toolshed-rate-limits"),
			Access:     get(TableVars[AccessTable], "toolshed-access"),
			APIKeys:    get(TableVars[APIKeysTable], "toolshed-api-keys"),
		},
	}
	if c.Store != "bolt" && c.Store != "dynamodb" {
		return c, fmt.Errorf("TOOLSHED_STORE=%q: use bolt or dynamodb", c.Store)
	}
	if c.Auth != "auto" && c.Auth != "keys" && c.Auth != "off" {
		return c, fmt.Errorf("TOOLSHED_AUTH=%q: use auto, keys or off", c.Auth)
	}
	if err := c.checkTenants(); err != nil {
		return c, err
	}
	var err error
	if c.RateLimits, err = parseLimits(getenv("TOOLSHED_RATE_LIMITS")); err != nil {
		return c, err
	}
	c.Origins = list(getenv("TOOLSHED_ALLOWED_ORIGINS"))
	if v := getenv("TOOLSHED_TOOL_FUNCTIONS"); v != "" {
		if err := json.Unmarshal([]byte(v), &c.ToolFunctions); err != nil {
			return c, fmt.Errorf("TOOLSHED_TOOL_FUNCTIONS: %w", err)
		}
	}
	if err := c.LogLevel.UnmarshalText([]byte(get("TOOLSHED_LOG_LEVEL", "info"))); err != nil {
		return c, fmt.Errorf("TOOLSHED_LOG_LEVEL: %w", err)
	}
	if c.Metrics, err = strconv.ParseBool(get("TOOLSHED_METRICS", strconv.FormatBool(inLambda))); err != nil {
		return c, fmt.Errorf("TOOLSHED_METRICS: %w", err)
	}
	if err := c.readOAuth(get, inLambda); err != nil {
		return c, err
	}
	return c, c.readRepository(get)
}

// checkTenants refuses a local tenant or a default repository that no API
// key could ever reach: both are tenants.
func (c *Config) checkTenants() error {
	if err := tenant.Check(c.LocalTenant); err != nil {
		return fmt.Errorf("TOOLSHED_LOCAL_TENANT: %w", err)
	}
	if c.DefaultRepo == "" {
		return nil
	}
	if err := tenant.Check(c.DefaultRepo); err != nil {
		return fmt.Errorf("TOOLSHED_DEFAULT_REPO: %w", err)
	}
	return nil
}

// readRepository reads the settings of the served repository.
func (c *Config) readRepository(get func(k, def string) string) error {
	var err error
	if c.RepoRefresh, err = time.ParseDuration(get("TOOLSHED_REPO_REFRESH", "5s")); err != nil || c.RepoRefresh <= 0 {
		return fmt.Errorf("TOOLSHED_REPO_REFRESH=%q: use a positive duration such as 5s", get("TOOLSHED_REPO_REFRESH", ""))
	}
	if c.RepoMaxMB, err = positive("TOOLSHED_REPO_MAX_MB", get("TOOLSHED_REPO_MAX_MB", strconv.Itoa(DefaultRepoMaxMB))); err != nil {
		return err
	}
	if c.RepoCacheMB, err = positive("TOOLSHED_REPO_CACHE_MB", get("TOOLSHED_REPO_CACHE_MB", "1024")); err != nil {
		return err
	}
	c.RepoDeny = list(get("TOOLSHED_REPO_DENY", "")) // checked by repo.ParseDeny when the repository opens
	if c.RepoWatch = get("TOOLSHED_REPO_WATCH", "auto"); c.RepoWatch != "auto" && c.RepoWatch != "poll" {
		return fmt.Errorf("TOOLSHED_REPO_WATCH=%q: use auto (file-system events) or poll (stat revalidation)", c.RepoWatch)
	}
	if c.RepoPoll, err = time.ParseDuration(get("TOOLSHED_REPO_POLL", "2s")); err != nil || c.RepoPoll < 100*time.Millisecond {
		return fmt.Errorf("TOOLSHED_REPO_POLL=%q: use a duration of at least 100ms, such as 2s", get("TOOLSHED_REPO_POLL", ""))
	}
	return nil
}

// Load reads the configuration from the process environment.
func Load() (Config, error) { return FromEnv(os.Getenv) }

// list splits a comma-separated setting, dropping blanks.
func list(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// positive parses a setting that must be a positive whole number.
func positive(name, v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s=%q: use a positive whole number", name, v)
	}
	return n, nil
}

func parseLimits(s string) (map[string]int, error) {
	m := map[string]int{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		tool, n, ok := strings.Cut(part, "=")
		v, err := strconv.Atoi(strings.TrimSpace(n))
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("TOOLSHED_RATE_LIMITS: %q is not tool=positive-number", part)
		}
		m[strings.TrimSpace(tool)] = v
	}
	return m, nil
}
