package config

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/toolshed/toolshed/shared/secretscan"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/tenant"
)

// StoreKind is where the tasks, memory, rate counters, access records and
// API keys are kept (TOOLSHED_STORE).
type StoreKind string

// The stores.
const (
	StoreBolt     StoreKind = "bolt"     // the embedded bbolt file in the data directory
	StoreDynamoDB StoreKind = "dynamodb" // the DynamoDB tables
)

// AuthMode says when the local server requires API keys (TOOLSHED_AUTH).
type AuthMode string

// The auth modes.
const (
	AuthAuto AuthMode = "auto" // while any unrevoked key exists, and always off loopback
	AuthKeys AuthMode = "keys" // always
	AuthOff  AuthMode = "off"  // never (loopback only)
)

// Watch is how the local repository view follows its directory
// (TOOLSHED_REPO_WATCH; see repo.LocalOptions).
type Watch string

// The watch modes.
const (
	// WatchAuto follows file-system events, and falls back to stat
	// revalidation where they are unavailable.
	WatchAuto Watch = "auto"
	// WatchPoll always revalidates by stat (for trees whose file system
	// sends no events for changes made elsewhere).
	WatchPoll Watch = "poll"
)

// Audience is how an access token names this resource
// (TOOLSHED_OAUTH_AUDIENCE).
type Audience string

// The values of TOOLSHED_OAUTH_AUDIENCE.
const (
	AudienceClaim Audience = "aud"   // the token's "aud" names the resource
	AudienceScope Audience = "scope" // or, without "aud", its scopes are the resource's
)

// The process-wide settings, each declared once (shared/settings): read by
// FromEnv, passed to functions by name (shared/deploy, infra), listed in
// the README's configuration table from their rows (a test keeps the two
// equal).
var (
	Addr = settings.New("TOOLSHED_ADDR", "127.0.0.1:8000",
		"local listen address", settings.Text)
	DataDir = settings.New("TOOLSHED_DATA_DIR", DefaultDataDir,
		"the local server's data: the embedded store (`toolshed.db`), file-io workspaces, context_search's index. A relative path is taken from the directory the server starts in, not from `-repo`: `make run` keeps it in `.toolshed/` at the top of this checkout (ignored by git, kept by `make clean`), whichever repository it serves; it is never part of the served repository (see [Repositories](repositories.md))",
		settings.Text)
	Store = settings.New("TOOLSHED_STORE", string(StoreBolt),
		"`bolt` or `dynamodb`", settings.OneOf(StoreBolt, StoreDynamoDB)).Shown("`bolt` (Lambda: `dynamodb`)")
	DynamoEndpoint = settings.New("TOOLSHED_DYNAMODB_ENDPOINT", "",
		"a local DynamoDB, e.g. `http://127.0.0.1:4567`", settings.Text)
	RateLimits = settings.New("TOOLSHED_RATE_LIMITS", "",
		"per-tool overrides, `hello=600,add_task=120` (requests per minute per tenant)", parseLimits)
	Auth = settings.New("TOOLSHED_AUTH", string(AuthAuto),
		"`auto`: keys are required while any unrevoked key exists, and always off loopback; `keys`: always required; `off`: never (loopback only)",
		settings.OneOf(AuthAuto, AuthKeys, AuthOff))
	LocalTenant = settings.New("TOOLSHED_LOCAL_TENANT", "local",
		"the tenant when auth is off", parseTenant)
	OAuthIssuer = settings.New("TOOLSHED_OAUTH_ISSUER", "",
		"the OAuth issuer whose access tokens every route takes beside API keys (see [OAuth access tokens](oauth.md)); https, or http on loopback",
		parseIssuer)
	PublicURL = settings.New("TOOLSHED_PUBLIC_URL", "",
		"the origin clients reach the server at; the OAuth resource is `<public URL>/mcp` (required deployed with an issuer)",
		parsePublicURL).Shown("local: `http://<listen address>`")
	OAuthTenantClaim = settings.New("TOOLSHED_OAUTH_TENANT_CLAIM", "sub",
		"the access token claim naming the tenant", settings.Text)
	OAuthReadScope = settings.New("TOOLSHED_OAUTH_READ_SCOPE", "toolshed:read",
		"the scope serving only the read-only tools", parseScope)
	OAuthFullScope = settings.New("TOOLSHED_OAUTH_FULL_SCOPE", "toolshed:full",
		"the scope serving every tool", parseScope)
	OAuthAudience = settings.New("TOOLSHED_OAUTH_AUDIENCE", string(AudienceClaim),
		"how a token names the resource: `aud` (its `aud` must contain `<public URL>/mcp`), or `scope` for issuers that bind it through scopes (Cognito): a token without `aud` then needs a scope `<public URL>/mcp/<name>`, and both scopes above must be such scopes",
		settings.OneOf(AudienceClaim, AudienceScope))
	Origins = settings.New("TOOLSHED_ALLOWED_ORIGINS", "",
		"extra browser origins allowed on the local server, comma-separated (loopback origins always are); deployed: `-c allowedOrigins=…`, any origin by default (see [The HTTP API](http-api.md))",
		settings.List)
	LogLevel = settings.New("TOOLSHED_LOG_LEVEL", "info",
		"`debug`, `info`, `warn`, `error`; the MCP library's own lines are at `debug`", parseLevel)
	Repos = settings.New("TOOLSHED_REPO_DIR", ".",
		"the repositories the repository tools read when `TOOLSHED_BUCKET` is unset, comma-separated, each `DIR` (named after its folder) or `name=DIR`; the first is the default one (local server flag: `-repo`, repeated; it also takes a folder whose path holds a comma)",
		settings.List).Shown("the working directory")
	DefaultRepo = settings.New("TOOLSHED_DEFAULT_REPO", "",
		"the tenant whose snapshot tenants without one read (deploy: `-c defaultRepo=acme`)", ParseOptionalTenant)
	RepoRefresh = settings.New("TOOLSHED_REPO_REFRESH", "5s",
		"how long a snapshot pointer is trusted before a conditional GET revalidates it", settings.Duration)
	RepoMaxMB = settings.New("TOOLSHED_REPO_MAX_MB", strconv.Itoa(DefaultRepoMaxMB),
		"largest repository, in MB of files (not of its zip), `scripts/snapshot push` accepts and the tools load (deployed, `grep_codebase` loads up to 800 and `read_repo_file`/`read_file` up to 1024, what their memory holds)",
		settings.Positive)
	RepoCacheMB = settings.New("TOOLSHED_REPO_CACHE_MB", "1024",
		"repository contents one process keeps in memory: S3 snapshots with what is built from them (symbol tables; least recently used dropped first), or the local view's files, compressed when they pass 256 MB (beyond it, files are read at each search)",
		settings.Positive)
	// RepoDeny's globs are checked by repo.ParseDeny when the repository
	// opens (and by shared/deploy at synthesis).
	RepoDeny = settings.New("TOOLSHED_REPO_DENY", "",
		"more paths the repository tools never read, search or index, comma-separated globs read as `.gitignore` reads them (`*.sqlite`, `private/`, `/config/prod/*`). They add to the built-in ones, which no setting removes (a `!` pattern is refused): "+builtinDeny()+
			"; and a file whose content holds a private key block or a credential in a known format is refused whatever its name (see [Repositories](repositories.md))",
		settings.List)
	RepoWatch = settings.New("TOOLSHED_REPO_WATCH", string(WatchAuto),
		"how the local view follows the directory: `auto` (file-system events, or stat revalidation where the file system sends none) or `poll` (always stat revalidation)",
		settings.OneOf(WatchAuto, WatchPoll))
	RepoPoll = settings.New("TOOLSHED_REPO_POLL", "2s",
		"how often stat revalidation runs when there are no events (at least ten times a revalidation's own duration)",
		parsePoll)
	Metrics = settings.New("TOOLSHED_METRICS", "",
		"write CloudWatch EMF metrics to stdout", parseOptionalBool).Shown("on in Lambda")
	Tool = settings.New("TOOLSHED_TOOL", "",
		"the tools a Lambda tool function serves, comma-separated (one, or all of a family deployed as one function)", settings.List).Shown("(set by the CDK)")
	ToolFunctions = settings.New("TOOLSHED_TOOL_FUNCTIONS", "",
		"the deployed gateway's Lambda function of each tool, a JSON object (`{\"hello\":\"<function name>\"}`)",
		settings.JSONMap).Shown("(set by the CDK)")
	Bucket = settings.New("TOOLSHED_BUCKET", "",
		"the S3 bucket (set by the CDK for functions granted it: the repository tools read snapshots from `snapshots/<tenant>/`, file-io keeps workspaces in `workspace/<tenant>/`, context_search reads `indexes/`, the navigation tools keep symbol tables in `symbols/`; unset, they use the local directory and the data directory)",
		settings.Text)
	S3Endpoint = settings.New("TOOLSHED_S3_ENDPOINT", "",
		"an S3 emulator for local runs (path-style)", settings.Text)
	NodeModules = settings.New("TOOLSHED_NODE_MODULES", "",
		"the `node_modules` folder the TypeScript and Python indexers run from (`@sourcegraph/scip-typescript`, `@sourcegraph/scip-python`: `npm ci` in the checkout installs them); never the served repository's (see [Repositories](repositories.md#precise-indexes))",
		settings.Text).Shown("the one beside the executable or in a folder above it")
	PreciseTime = settings.New("TOOLSHED_PRECISE_TIME", "10m",
		"how long one run of a precise indexer may take before it is killed with everything it started (the Go tree takes about 30 s on two idle cores; see [Repositories](repositories.md#precise-indexes))",
		settings.Duration)
	PreciseMemoryMB = settings.New("TOOLSHED_PRECISE_MEMORY_MB", "2048",
		"the memory one run of a precise indexer may take, in MB: a memory cgroup where the machine lets the server make one, else `RLIMIT_AS` (Go) or V8's heap limit (node); the Go tree's index takes about 800",
		settings.Positive)
	PreciseOutputMB = settings.New("TOOLSHED_PRECISE_OUTPUT_MB", "1024",
		"the largest SCIP index one run of a precise indexer may write, in MB (the Go tree's: about 200)",
		settings.Positive)
	PreciseQuiet = settings.New("TOOLSHED_PRECISE_QUIET", "3s",
		"how long a repository must go without a change before the local server indexes what changed precisely again (a burst of saves is one run)",
		settings.Duration)
	HistoryDir = settings.New("TOOLSHED_HISTORY_DIR", "",
		"(default: `toolshed-history` in the temporary folder, `/tmp` on Lambda) where a deployed function copies the repository histories `scripts/snapshot push` uploaded, one bare git repository each, read by the history tools (see [History](history.md#deployed))",
		settings.Text)
)

// ToolValue is the value of Tool that names tools: comma-separated, as
// Tool reads it back (settings.List).
func ToolValue(tools []string) string { return strings.Join(tools, ",") }

// TableSettings are the settings naming each DynamoDB table.
var TableSettings = map[Table]settings.Var[string]{
	TasksTable:      tableSetting("TOOLSHED_TASKS_TABLE", "toolshed-tasks", TasksTable),
	MemoryTable:     tableSetting("TOOLSHED_MEMORY_TABLE", "toolshed-memory", MemoryTable),
	RateLimitsTable: tableSetting("TOOLSHED_RATE_TABLE", "toolshed-rate-limits", RateLimitsTable),
	AccessTable:     tableSetting("TOOLSHED_ACCESS_TABLE", "toolshed-access", AccessTable),
	APIKeysTable:    tableSetting("TOOLSHED_APIKEYS_TABLE", "toolshed-api-keys", APIKeysTable),
}

func tableSetting(name, def string, t Table) settings.Var[string] {
	return settings.New(name, def, "the "+string(t)+" DynamoDB table's name", settings.Text)
}

// Settings are every process-wide setting, in the README's order.
var Settings = []settings.Setting{Addr, DataDir, Store, DynamoEndpoint,
	TableSettings[TasksTable], TableSettings[MemoryTable], TableSettings[RateLimitsTable],
	TableSettings[AccessTable], TableSettings[APIKeysTable],
	RateLimits, Auth, LocalTenant, OAuthIssuer, PublicURL, OAuthTenantClaim, OAuthReadScope,
	OAuthFullScope, OAuthAudience, Origins, LogLevel, Repos, DefaultRepo, RepoRefresh,
	RepoMaxMB, RepoCacheMB, RepoDeny, RepoWatch, RepoPoll, Metrics, Tool, ToolFunctions,
	Bucket, S3Endpoint, NodeModules, PreciseTime, PreciseMemoryMB, PreciseOutputMB, PreciseQuiet, HistoryDir}

// ParseOptionalTenant parses a tenant, or "" for none.
func ParseOptionalTenant(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	return s, tenant.Check(s)
}

func parseTenant(s string) (string, error) { return s, tenant.Check(s) }

// parseLimits reads tool=perMinute items.
func parseLimits(s string) (map[string]int, error) {
	m := map[string]int{}
	items, _ := settings.List(s)
	for _, item := range items {
		tool, n, ok := strings.Cut(item, "=")
		v, err := strconv.Atoi(strings.TrimSpace(n))
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("%q is not tool=positive-number", item)
		}
		m[strings.TrimSpace(tool)] = v
	}
	return m, nil
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	return l, l.UnmarshalText([]byte(s))
}

// parseOptionalBool reads true or false; "" is nil (the default depends
// on where the process runs).
func parseOptionalBool(s string) (*bool, error) {
	if s == "" {
		return nil, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return nil, errors.New("use true or false")
	}
	return &b, nil
}

// minPoll is the shortest TOOLSHED_REPO_POLL.
const minPoll = 100 * time.Millisecond

func parsePoll(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < minPoll {
		return 0, fmt.Errorf("use a duration of at least %v, such as 2s", minPoll)
	}
	return d, nil
}

// parseIssuer reads an issuer URL (an https URL that may have a path), or
// "" for none.
func parseIssuer(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	return s, checkURL(s, true)
}

// parsePublicURL reads an origin, without a trailing slash; "" is none.
func parsePublicURL(s string) (string, error) {
	s = strings.TrimSuffix(s, "/")
	if s == "" {
		return "", nil
	}
	if err := checkURL(s, false); err != nil {
		return "", fmt.Errorf("%w (e.g. https://tools.example.com)", err)
	}
	return s, nil
}

// parseScope reads an OAuth scope name.
func parseScope(s string) (string, error) {
	if strings.ContainsAny(s, " \"\\") {
		return "", errors.New("a scope has no spaces, quotes or backslashes (RFC 6749 §3.3)")
	}
	return s, nil
}

// builtinDeny names, for RepoDeny's description, the paths every
// repository policy denies (repo.DefaultDeny, which this package cannot
// import): git's own folder and the files of secretscan.PathRules.
func builtinDeny() string {
	names := []string{"`.git/`"}
	for _, r := range secretscan.PathRules {
		for _, p := range r.Patterns {
			names = append(names, "`"+strings.TrimPrefix(p, "**/")+"`")
		}
	}
	return strings.Join(names, ", ")
}
