// Package deploy derives what a deployment gives each tool function from
// its family's declarations and its contract: the function's grants,
// environment (with the chosen settings, checked) and timeout. The CDK app
// uses it, and so do the tests that run the bootstraps as deployed.
package deploy

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/secrets"
	"github.com/toolshed/toolshed/shared/settings"
)

// TimeoutMargin is what a tool function's Lambda timeout adds to its
// contract's deadline: the pipeline answers TIMEOUT itself, with room left
// for a cold start and for writing the answer.
const TimeoutMargin = 3 * time.Second

// CommonSettings are the process-wide settings (shared/config) a
// deployment may choose for every tool function.
var CommonSettings = []string{"TOOLSHED_RATE_LIMITS", "TOOLSHED_LOG_LEVEL"}

// RepositorySettings are the process-wide settings a deployment may choose
// for the functions that read repositories (the repository tools' and the
// indexer's): the paths they never read, search or index.
var RepositorySettings = []string{"TOOLSHED_REPO_DENY"}

// Grants are the grants of the function serving tool: its rate counter
// first (every tool function counts its calls), then the family's grants
// for that tool.
func Grants(f family.Family, tool string) []family.Grant {
	return append([]family.Grant{family.Table(config.RateLimitsTable, "dynamodb:UpdateItem")}, f.GrantsFor(tool)...)
}

// Timeout is the Lambda timeout of a tool whose contract allows
// timeoutMs: that deadline in whole seconds, plus TimeoutMargin.
func Timeout(timeoutMs int) time.Duration {
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
	// Getenv reads the settings the deployment chose (the CDK app: from
	// its context, never from the environment it synthesizes in).
	Getenv func(string) string
}

// Env is the environment of the function serving tool, and nothing more:
// the tool, DynamoDB as the store, the name of each table the function is
// granted, the bucket when it is granted any of it, the default repository
// when the family reads repositories, and the settings (the family's fixed
// Env, and the chosen process-wide and declared settings, see SettingsEnv).
func Env(f family.Family, tool string, d Deployment) map[string]string {
	env := map[string]string{"TOOLSHED_TOOL": tool, "TOOLSHED_STORE": "dynamodb"}
	grants := Grants(f, tool)
	for _, g := range grants {
		if g.Kind == family.TableGrant {
			env[config.TableVars[g.Table]] = d.TableName(g.Table)
		}
	}
	if family.UsesBucket(grants) {
		env["TOOLSHED_BUCKET"] = d.Bucket
	}
	if f.ReadsRepositories && d.DefaultRepo != "" {
		env["TOOLSHED_DEFAULT_REPO"] = d.DefaultRepo
	}
	for k, v := range f.Env {
		env[k] = v
	}
	maps.Copy(env, SettingsEnv(processSettings(f), f.Settings, d.Getenv))
	return env
}

// SettingsEnv is the environment that gives a function the settings the
// deployment chose (getenv) among names (process-wide settings) and
// declared: each as chosen, except a secret, whose value is never written
// into the deployment: secrets.EnvVar names the parameter the function
// reads it from at start (see SecretParameters).
func SettingsEnv(names []string, declared []settings.Setting, getenv func(string) string) map[string]string {
	env := map[string]string{}
	for _, name := range names {
		if v := getenv(name); v != "" {
			env[name] = v
		}
	}
	for _, s := range declared {
		if v := getenv(s.Name()); v != "" && !s.IsSecret() {
			env[s.Name()] = v
		}
	}
	if params := SecretParameters(declared, getenv); len(params) > 0 {
		env[secrets.EnvVar] = secrets.Encode(params)
	}
	return env
}

// SecretParameters maps each secret setting of declared that the
// deployment chose to the parameter its value is read from (the chosen
// value is a reference, secrets.ParseRef; one that is not is left out, and
// CheckSettings refuses it).
func SecretParameters(declared []settings.Setting, getenv func(string) string) map[string]string {
	params := map[string]string{}
	for _, s := range declared {
		if !s.IsSecret() {
			continue
		}
		if name, err := secrets.ParseRef(getenv(s.Name())); err == nil {
			params[s.Name()] = name
		}
	}
	return params
}

// CheckSettings checks the value of each setting the deployment chose, so
// that a value a function would refuse at start stops the deployment
// instead: a declared setting's with its declaration (a secret's must be
// a reference to its parameter, never the secret itself), and the
// process-wide settings as the functions read them.
func CheckSettings(declared []settings.Setting, getenv func(string) string) error {
	var errs []error
	for _, s := range declared {
		v := getenv(s.Name())
		switch {
		case v == "":
		case s.IsSecret():
			if _, err := secrets.ParseRef(v); err != nil {
				errs = append(errs, fmt.Errorf("%s is a secret: %w", s.Name(), err))
			}
		default:
			errs = append(errs, s.Check(v))
		}
	}
	return errors.Join(append(errs, checkProcessSettings(getenv))...)
}

// checkProcessSettings reads the chosen process-wide settings (and only
// those) as a function reads them at start.
func checkProcessSettings(getenv func(string) string) error {
	chosen := func(name string) string {
		if slices.Contains(ProcessSettings(), name) {
			return getenv(name)
		}
		return ""
	}
	cfg, err := config.FromEnv(chosen)
	if err != nil {
		return err
	}
	_, err = repo.ParseDeny(cfg.RepoDeny)
	return err
}

// ProcessSettings are every process-wide setting a deployment may choose
// (for some of its functions): CommonSettings and RepositorySettings.
func ProcessSettings() []string {
	return slices.Concat(CommonSettings, RepositorySettings)
}

// processSettings are the process-wide settings a deployment may choose
// for the family's functions: CommonSettings, and RepositorySettings when
// it reads repositories.
func processSettings(f family.Family) []string {
	names := slices.Clone(CommonSettings)
	if f.ReadsRepositories {
		names = append(names, RepositorySettings...)
	}
	return names
}
