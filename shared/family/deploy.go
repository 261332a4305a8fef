package family

import (
	"math"
	"slices"
	"time"

	"github.com/toolshed/toolshed/shared/config"
)

// TimeoutMargin is what a tool function's Lambda timeout adds to its
// contract's deadline: the pipeline answers TIMEOUT itself, with room left
// for a cold start and for writing the answer.
const TimeoutMargin = 3 * time.Second

// CommonSettings are the settings a deployment may choose for every tool
// function (each family adds its own Settings).
var CommonSettings = []string{"TOOLSHED_RATE_LIMITS", "TOOLSHED_LOG_LEVEL"}

// RepositorySettings are the settings a deployment may choose for the
// functions that read repositories (the repository tools' and the
// indexer's): the paths they never read, search or index.
var RepositorySettings = []string{"TOOLSHED_REPO_DENY"}

// FunctionGrants are the grants of the function serving tool: its rate
// counter first (every tool function counts its calls), then the family's
// grants for that tool.
func (f Family) FunctionGrants(tool string) []Grant {
	return append([]Grant{Table(config.RateLimitsTable, "dynamodb:UpdateItem")}, f.GrantsFor(tool)...)
}

// FunctionTimeout is the Lambda timeout of a tool whose contract allows
// timeoutMs: that deadline in whole seconds, plus TimeoutMargin.
func FunctionTimeout(timeoutMs int) time.Duration {
	return time.Duration(math.Ceil(float64(timeoutMs)/1000))*time.Second + TimeoutMargin
}

// Deployment is what a deployment (the CDK app, or a test standing in for
// it) gives its tool functions.
type Deployment struct {
	// TableName names a table.
	TableName func(config.Table) string
	// Bucket is the S3 bucket.
	Bucket string
	// DefaultRepo is the tenant whose repository tenants without one read;
	// "" for none.
	DefaultRepo string
	// Getenv reads the settings the deployment chose (os.Getenv when the
	// CDK app synthesizes).
	Getenv func(string) string
}

// FunctionEnv is the environment of the function serving tool, and
// nothing more: the tool, DynamoDB as the store, the name of each table
// the function is granted, the bucket when it is granted any of it, the
// default repository when the family reads repositories, and the
// settings (the family's fixed Env and the chosen CommonSettings and
// Settings).
func (f Family) FunctionEnv(tool string, d Deployment) map[string]string {
	env := map[string]string{"TOOLSHED_TOOL": tool, "TOOLSHED_STORE": "dynamodb"}
	grants := f.FunctionGrants(tool)
	for _, g := range grants {
		if g.Kind == TableGrant {
			env[config.TableVars[g.Table]] = d.TableName(g.Table)
		}
	}
	if UsesBucket(grants) {
		env["TOOLSHED_BUCKET"] = d.Bucket
	}
	if f.ReadsRepositories && d.DefaultRepo != "" {
		env["TOOLSHED_DEFAULT_REPO"] = d.DefaultRepo
	}
	for k, v := range f.Env {
		env[k] = v
	}
	for _, name := range f.SettingNames() {
		if v := d.Getenv(name); v != "" {
			env[name] = v
		}
	}
	return env
}

// SettingNames are the settings a deployment may choose for the family's
// functions: CommonSettings, RepositorySettings when it reads
// repositories, and its own.
func (f Family) SettingNames() []string {
	names := slices.Clone(CommonSettings)
	if f.ReadsRepositories {
		names = append(names, RepositorySettings...)
	}
	return append(names, f.Settings...)
}
