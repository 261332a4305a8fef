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
// (functions/tool); TOOLSHED_TOOL tells it which tool it serves.
const toolDir = "tool"

// toolSpec is one tool function, derived from its family and its contract.
type toolSpec struct {
	Name           string
	Aliases        []string
	TimeoutSeconds float64 // the function's: the contract's deadline and deploy.TimeoutMargin
	DeadlineMs     float64 // the contract's timeoutMs
	MemoryMB       float64
	Grants         []family.Grant // the rate counter first, then the family's grants for this tool
	Family         family.Family  `json:"-"` // holds its constructor, which has no JSON
}

// tools drives every tool function, its routes and its permissions.
var tools = mustToolSpecs(toolset.Families)

func mustToolSpecs(families []family.Family) []toolSpec {
	set, err := schema.Load(contracts.FS)
	if err != nil {
		panic(fmt.Sprintf("load contracts: %v", err))
	}
	specs, err := toolSpecs(families, set)
	if err != nil {
		panic(err)
	}
	return specs
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

// toolSpecs derives one toolSpec per tool of the families, but those
// only the local server serves (family.LocalOnly).
func toolSpecs(families []family.Family, set *schema.Set) ([]toolSpec, error) {
	var specs []toolSpec
	for _, f := range families {
		if f.LocalOnly {
			continue
		}
		for _, name := range f.Tools {
			c, ok := set.Get(name)
			if !ok || c.Name != name {
				return nil, fmt.Errorf("tool %s of family %s has no contract", name, f.Name)
			}
			grants := deploy.Grants(f, name)
			for _, g := range grants {
				if err := g.Check(); err != nil {
					return nil, fmt.Errorf("tool %s: %w", name, err)
				}
			}
			specs = append(specs, toolSpec{
				Name:           name,
				Aliases:        c.Aliases,
				TimeoutSeconds: deploy.Timeout(c.TimeoutMs).Seconds(),
				DeadlineMs:     float64(c.TimeoutMs),
				MemoryMB:       float64(f.Memory()),
				Grants:         grants,
				Family:         f,
			})
		}
	}
	return specs, nil
}
