package main

import (
	"fmt"
	"slices"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/toolset"
)

// toolDir is the build folder of the one bootstrap every tool function runs
// (functions/tool); TOOLSHED_TOOL tells it which tools it serves.
const toolDir = "tool"

// toolSpec is one tool: its routes and alarms, derived from its contract,
// and the function serving it.
type toolSpec struct {
	Name       string
	Aliases    []string
	DeadlineMs float64          // the contract's timeoutMs
	Function   *functionOfTools `json:"-"`
}

// functionOfTools is one tool function (deploy.Functions): the tools it
// serves, derived from their family and contracts.
type functionOfTools struct {
	deploy.Function
	TimeoutSeconds float64 // the longest of its tools' (deploy.FunctionTimeout)
	MemoryMB       float64
	StorageMB      float64        // ephemeral storage; 0: Lambda's default
	Grants         []family.Grant // the rate counter first, then the family's grants for its tools
}

// tools drives every tool's routes and alarms, toolFunctions every tool
// function and its permissions.
var tools, toolFunctions = mustToolSpecs(toolset.Families)

func mustToolSpecs(families []family.Family) ([]toolSpec, []*functionOfTools) {
	set, err := schema.Load(contracts.FS)
	if err != nil {
		panic(fmt.Sprintf("load contracts: %v", err))
	}
	specs, fns, err := toolSpecs(families, set)
	if err != nil {
		panic(err)
	}
	return specs, fns
}

// declaredSettings are the settings declared for the deployment's
// functions: each family's, and the indexer's (the embedding settings and
// its own).
func declaredSettings(families []family.Family) []settings.Setting {
	out := slices.Concat(embedding.Settings, indexer.Settings)
	for _, f := range families {
		for _, s := range f.AllSettings() {
			if !slices.ContainsFunc(out, func(o settings.Setting) bool { return o.Name() == s.Name() }) {
				out = append(out, s)
			}
		}
	}
	return out
}

// toolSpecs derives the tools of the families and the functions serving
// them (deploy.Functions), in family order.
func toolSpecs(families []family.Family, set *schema.Set) ([]toolSpec, []*functionOfTools, error) {
	var specs []toolSpec
	var fns []*functionOfTools
	for _, f := range deploy.Functions(families) {
		timeout, err := deploy.FunctionTimeout(f, set)
		if err != nil {
			return nil, nil, err
		}
		grants := deploy.Grants(f)
		for _, g := range grants {
			if err := g.Check(); err != nil {
				return nil, nil, fmt.Errorf("function %s: %w", f.Name, err)
			}
		}
		fn := &functionOfTools{Function: f, TimeoutSeconds: timeout.Seconds(), MemoryMB: float64(f.Family.Memory()),
			StorageMB: float64(f.Family.StorageMB), Grants: grants}
		fns = append(fns, fn)
		for _, name := range f.Tools {
			c, _ := set.Get(name) // FunctionTimeout found it
			specs = append(specs, toolSpec{Name: name, Aliases: c.Aliases, DeadlineMs: float64(c.TimeoutMs), Function: fn})
		}
	}
	return specs, fns, nil
}
