package main

import (
	"fmt"
	"math"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolset"
)

// toolDir is the build folder of the one bootstrap every tool function runs
// (functions/tool); TOOLSHED_TOOL tells it which tool it serves.
const toolDir = "tool"

// timeoutMarginSeconds is what a tool function's Lambda timeout adds to its
// contract's deadline: the pipeline answers TIMEOUT itself, with room left
// for a cold start and for writing the answer.
const timeoutMarginSeconds = 3

// rateCounter is the grant every tool function has: its rate counter.
var rateCounter = family.Table(config.RateLimitsTable, "dynamodb:UpdateItem")

// toolSpec is one tool function, derived from its family and its contract.
type toolSpec struct {
	Name           string
	Aliases        []string
	TimeoutSeconds float64
	MemoryMB       float64
	Grants         []family.Grant    // the rate counter first, then the family's grants for this tool
	Env            map[string]string // fixed settings from the family
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

// toolSpecs derives one toolSpec per tool of the families.
func toolSpecs(families []family.Family, set *schema.Set) ([]toolSpec, error) {
	var specs []toolSpec
	for _, f := range families {
		for _, name := range f.Tools {
			c, ok := set.Get(name)
			if !ok || c.Name != name {
				return nil, fmt.Errorf("tool %s of family %s has no contract", name, f.Name)
			}
			grants := append([]family.Grant{rateCounter}, f.GrantsFor(name)...)
			for _, g := range grants {
				if err := g.Check(); err != nil {
					return nil, fmt.Errorf("tool %s: %w", name, err)
				}
			}
			specs = append(specs, toolSpec{
				Name:           name,
				Aliases:        c.Aliases,
				TimeoutSeconds: math.Ceil(float64(c.TimeoutMs)/1000) + timeoutMarginSeconds,
				MemoryMB:       float64(f.Memory()),
				Grants:         grants,
				Env:            f.Env,
			})
		}
	}
	return specs, nil
}
