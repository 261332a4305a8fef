// Package family is how tools join Toolshed: declarations only. A family
// names its tools, declares what its functions may touch when deployed
// (Grants) and the settings they read (Settings), and has one constructor
// that asks a wiring.Env for only the family's own dependencies. The local
// server builds every family; a tool's Lambda function builds only the
// family of its tools.
//
// Adding a tool is a contract in contracts/, a package with its Family, and
// one line in shared/toolset. The CDK app derives each tool's function,
// routes, timeout, environment and IAM policy from the same Family and
// contract (shared/deploy).
package family

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/wiring"
)

// DefaultMemoryMB is the memory of a tool function whose family sets none.
const DefaultMemoryMB = 256

// Family is a group of tools built together because they share dependencies.
type Family struct {
	// Name identifies the family in logs and errors, e.g. "tasks".
	Name string
	// Tools are the canonical names (contracts/<name>.json) of its tools.
	Tools []string
	// Grants are what each of its tool functions may do when deployed,
	// besides counting its rate limit (every tool function may).
	Grants []Grant
	// Env is fixed configuration its functions get when deployed.
	Env map[string]string
	// Settings are the family's own settings (allowlists, quotas, models,
	// the cursor key), each declared once in the tool's package: the
	// constructor reads them with env.Getenv, the CDK app passes on each
	// one the deployment sets to the functions of the tools that read it
	// (shared/deploy), and the README lists them (a test checks). Build
	// them with Every and Only.
	Settings []Setting
	// ReadsRepositories says its tools read tenants' repositories, so its
	// functions learn the deployment's default repository.
	ReadsRepositories bool
	// OneFunction says a deployment serves all its tools from one Lambda
	// function (named after the family) instead of one per tool: for
	// tools that share a costly state a function builds at its start (the
	// history tools' copy of a repository's history in /tmp, a download
	// of hundreds of MB that a function per tool would each repeat, and
	// their blame cache), and it spares the stack the resources of the
	// other functions (CloudFormation takes at most 500 per stack). The
	// function has the union of its tools' grants and settings and the
	// longest of their timeouts; each tool keeps its routes and alarms.
	OneFunction bool
	// MemoryMB is its functions' memory; 0 means DefaultMemoryMB.
	MemoryMB int
	// StorageMB is its functions' ephemeral storage (/tmp) in MB; 0 means
	// Lambda's default (512 MB).
	StorageMB int
	// Layers are the Lambda layers its functions need (GitLayer), which a
	// deployment attaches to them: Lambda extracts them into /opt, with
	// /opt/bin on PATH and /opt/lib on LD_LIBRARY_PATH.
	Layers []string
	// Concurrency is the reserved concurrency of each of its functions
	// when deployed: at most that many run at once, so that a flood of
	// calls to a heavy tool cannot take every execution the account has;
	// 0 means none reserved.
	Concurrency int
	// New builds the family's tools. It must name exactly Tools, and should
	// ask env only for what the family uses.
	New func(ctx context.Context, env *wiring.Env) ([]toolkit.Tool, error)
}

// GitLayer is the Lambda layer with the git program and the libraries it
// links beyond the C library (scripts/gitlayer lays it out), for the
// families that run git: the Lambda runtime has none.
const GitLayer = "git"

// ReadsHistory returns f with what its functions need to read the
// repositories' pushed histories (githistory.Published) when deployed:
// the git layer, githistory.CopyStorageMB of /tmp for the copy, and read
// access to the histories for the named tools (none named: all of them).
// The history tools read them, and so does the "ref" of the file tools.
// ListBucket makes S3 answer 404 (pushed without its history), not 403.
func ReadsHistory(f Family, tools ...string) Family {
	f.Layers = append(slices.Clone(f.Layers), GitLayer)
	f.StorageMB = max(f.StorageMB, githistory.CopyStorageMB)
	f.Grants = append(slices.Clone(f.Grants),
		Objects(githistory.BucketPrefix, "s3:GetObject").For(tools...), List(githistory.BucketPrefix).For(tools...))
	return f
}

// Memory returns the family's function memory in MB.
func (f Family) Memory() int {
	if f.MemoryMB > 0 {
		return f.MemoryMB
	}
	return DefaultMemoryMB
}

// GrantsFor returns the grants of the family's function serving tools:
// those of any of them, each once.
func (f Family) GrantsFor(tools ...string) []Grant {
	var out []Grant
	for _, g := range f.Grants {
		if appliesTo(g.Only, tools) {
			out = append(out, g)
		}
	}
	return out
}

// appliesTo reports whether a grant or setting limited to only (none:
// every tool of the family) applies to a function serving tools.
func appliesTo(only, tools []string) bool {
	return len(only) == 0 || slices.ContainsFunc(tools, func(t string) bool { return slices.Contains(only, t) })
}

// Setting is one setting of a family's functions.
type Setting struct {
	settings.Setting
	// Only limits the setting to these tools of the family; empty means
	// all.
	Only []string
}

// Every returns settings every tool of the family reads.
func Every(ss ...settings.Setting) []Setting {
	out := make([]Setting, len(ss))
	for i, s := range ss {
		out[i] = Setting{Setting: s}
	}
	return out
}

// Only returns a setting only the named tools of the family read (as
// Grant.For limits a grant), so that the functions of its other tools are
// not given it, and start without it.
func Only(s settings.Setting, tools ...string) Setting {
	return Setting{Setting: s, Only: tools}
}

// SettingsFor returns the settings of the family's function serving
// tools: those any of them reads, each once.
func (f Family) SettingsFor(tools ...string) []settings.Setting {
	var out []settings.Setting
	for _, s := range f.Settings {
		if appliesTo(s.Only, tools) {
			out = append(out, s.Setting)
		}
	}
	return out
}

// AllSettings returns every setting of the family, whichever tools read
// it.
func (f Family) AllSettings() []settings.Setting {
	out := make([]settings.Setting, len(f.Settings))
	for i, s := range f.Settings {
		out[i] = s.Setting
	}
	return out
}

// Of returns the family that has the named tool.
func Of(families []Family, tool string) (Family, bool) {
	for _, f := range families {
		if slices.Contains(f.Tools, tool) {
			return f, true
		}
	}
	return Family{}, false
}

// Build runs the constructors of the families and returns their tools.
// With names, only the families of those tools are built and only those
// tools returned; an unknown name is an error.
func Build(ctx context.Context, families []Family, env *wiring.Env, names ...string) ([]toolkit.Tool, error) {
	var chosen []Family
	if len(names) == 0 {
		chosen = families
	} else {
		for _, n := range names {
			f, ok := Of(families, n)
			if !ok {
				return nil, fmt.Errorf("no family serves a tool named %q", n)
			}
			if !slices.ContainsFunc(chosen, func(c Family) bool { return c.Name == f.Name }) {
				chosen = append(chosen, f)
			}
		}
	}
	var out []toolkit.Tool
	for _, f := range chosen {
		tools, err := f.New(ctx, env)
		if err != nil {
			return nil, fmt.Errorf("build %s tools: %w", f.Name, err)
		}
		if err := f.check(tools); err != nil {
			return nil, err
		}
		for _, t := range tools {
			if len(names) == 0 || slices.Contains(names, t.Name) {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// check makes sure a family built exactly the tools it names.
func (f Family) check(tools []toolkit.Tool) error {
	built := make([]string, len(tools))
	for i, t := range tools {
		built[i] = t.Name
	}
	want := slices.Clone(f.Tools)
	slices.Sort(built)
	slices.Sort(want)
	if !slices.Equal(built, want) {
		return fmt.Errorf("family %s names tools %v but built %v", f.Name, want, built)
	}
	return nil
}

// OverStores is the New of a family whose tools need only the stores, the
// clock and, for its one tool that pages (paging, which its Settings give
// the cursor key Only), the paging cursors' key (tasks, memory): tools
// builds them over what env opens. A function serving another of its
// tools starts without the key: its tools get the zero Key, which only
// paging would use.
func OverStores(paging string, tools func(st store.Stores, now func() time.Time, cursors cursor.Key) []toolkit.Tool) func(context.Context, *wiring.Env) ([]toolkit.Tool, error) {
	return func(ctx context.Context, env *wiring.Env) ([]toolkit.Tool, error) {
		st, err := env.Stores(ctx)
		if err != nil {
			return nil, err
		}
		key, err := env.CursorsFor(paging)
		if err != nil {
			return nil, err
		}
		return tools(st, env.Now, key), nil
	}
}
