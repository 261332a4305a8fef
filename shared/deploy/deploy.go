// Package deploy derives what a deployment gives each tool function from
// its family's declarations and its tools' contracts: which tools each
// function serves (one, or all of a family deployed as one function), the
// function's grants, environment (with the chosen settings, checked) and
// timeout. The CDK app
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
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/secrets"
	"github.com/toolshed/toolshed/shared/settings"
)

// TimeoutMargin is what a tool function's Lambda timeout adds to its
// contract's deadline: the pipeline answers TIMEOUT itself, with room left
// for a cold start and for writing the answer.
const TimeoutMargin = 3 * time.Second

// CommonSettings are the process-wide settings (shared/config) a
// deployment may choose for every tool function.
var CommonSettings = []settings.Setting{config.RateLimits, config.LogLevel}

// RepositorySettings are the process-wide settings a deployment may choose
// for the functions that read repositories (the repository tools' and the
// indexer's): the paths they never read, search or index.
var RepositorySettings = []settings.Setting{config.RepoDeny}

// Function is one tool function of a deployment: the tools it serves, all
// of one family.
type Function struct {
	// Name names the function (its log group, alarms and reserved
	// concurrency): its tool's, or its family's when the family is
	// deployed as one function (family.OneFunction).
	Name   string
	Family family.Family
	Tools  []string
}

// Functions are the tool functions serving the families' tools, in family
// order: one per tool, or one for all the tools of a family deployed as
// one function.
func Functions(families []family.Family) []Function {
	var out []Function
	for _, f := range families {
		if f.OneFunction {
			out = append(out, Function{Name: f.Name, Family: f, Tools: f.Tools})
			continue
		}
		for _, tool := range f.Tools {
			out = append(out, Function{Name: tool, Family: f, Tools: []string{tool}})
		}
	}
	return out
}

// FunctionOf returns the function serving tool.
func FunctionOf(families []family.Family, tool string) (Function, bool) {
	for _, fn := range Functions(families) {
		if slices.Contains(fn.Tools, tool) {
			return fn, true
		}
	}
	return Function{}, false
}

// Settings are the family's settings the function's tools read.
func (fn Function) Settings() []settings.Setting { return fn.Family.SettingsFor(fn.Tools...) }

// Grants are the grants of a tool function: its rate counter first (every
// tool function counts its calls), then the family's grants for its
// tools.
func Grants(fn Function) []family.Grant {
	return append([]family.Grant{family.Table(config.RateLimitsTable, "dynamodb:UpdateItem")}, fn.Family.GrantsFor(fn.Tools...)...)
}

// Timeout is the Lambda timeout of a tool whose contract allows
// timeoutMs: that deadline in whole seconds, plus TimeoutMargin.
func Timeout(timeoutMs int) time.Duration {
	return time.Duration(math.Ceil(float64(timeoutMs)/1000))*time.Second + TimeoutMargin
}

// FunctionTimeout is the Lambda timeout of a tool function: the longest
// Timeout of its tools, whose contracts are in set.
func FunctionTimeout(fn Function, set *schema.Set) (time.Duration, error) {
	var longest time.Duration
	for _, tool := range fn.Tools {
		c, ok := set.Get(tool)
		if !ok || c.Name != tool {
			return 0, fmt.Errorf("tool %s of family %s has no contract", tool, fn.Family.Name)
		}
		longest = max(longest, Timeout(c.TimeoutMs))
	}
	return longest, nil
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

// Env is the environment of a tool function, and nothing more: its
// tools, DynamoDB as the store, the name of each table the function is
// granted, the bucket when it is granted any of it, the default repository
// when the family reads repositories, and the settings (the family's fixed
// Env, and the chosen process-wide and declared settings, see SettingsEnv).
func Env(fn Function, d Deployment) map[string]string {
	f := fn.Family
	env := map[string]string{config.Tool.Name(): config.ToolValue(fn.Tools), config.Store.Name(): string(config.StoreDynamoDB)}
	grants := Grants(fn)
	for _, g := range grants {
		if g.Kind == family.TableGrant {
			env[config.TableSettings[g.Table].Name()] = d.TableName(g.Table)
		}
	}
	if family.UsesBucket(grants) {
		env[config.Bucket.Name()] = d.Bucket
	}
	if f.ReadsRepositories && d.DefaultRepo != "" {
		env[config.DefaultRepo.Name()] = d.DefaultRepo
	}
	for k, v := range f.Env {
		env[k] = v
	}
	maps.Copy(env, SettingsEnv(slices.Concat(processSettings(f), fn.Settings()), d.Getenv))
	return env
}

// SettingsEnv is the environment that gives a function the settings the
// deployment chose (getenv) among declared: each as chosen, except a
// secret, whose value is never written into the deployment:
// secrets.EnvVar names the parameter the function reads it from at start
// (see SecretParameters).
func SettingsEnv(declared []settings.Setting, getenv func(string) string) map[string]string {
	env := map[string]string{}
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

// CheckSettings checks the value of each setting the deployment chose
// among declared and the process-wide ones it may choose
// (ProcessSettings), so that a value a function would refuse at start
// stops the deployment instead: each with its declaration (a secret's
// must be a reference to its parameter, never the secret itself), and the
// repository's deny globs as the repository reads them.
func CheckSettings(declared []settings.Setting, getenv func(string) string) error {
	var errs []error
	for _, s := range slices.Concat(declared, ProcessSettings()) {
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
	if deny, err := config.RepoDeny.Get(getenv); err == nil {
		_, err = repo.ParseDeny(deny)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ProcessSettings are every process-wide setting a deployment may choose
// (for some of its functions): CommonSettings and RepositorySettings.
func ProcessSettings() []settings.Setting {
	return slices.Concat(CommonSettings, RepositorySettings)
}

// processSettings are the process-wide settings a deployment may choose
// for the family's functions: CommonSettings, and RepositorySettings when
// it reads repositories.
func processSettings(f family.Family) []settings.Setting {
	names := slices.Clone(CommonSettings)
	if f.ReadsRepositories {
		names = append(names, RepositorySettings...)
	}
	return names
}
