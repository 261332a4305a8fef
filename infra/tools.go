package main

import (
	"fmt"
	"math"
	"os"
	"slices"

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

// commonSettings are the settings every tool function takes from the
// environment the stack is synthesized in, when set there.
var commonSettings = []string{"TOOLSHED_RATE_LIMITS", "TOOLSHED_LOG_LEVEL"}

// rateCounter is the grant every tool function has: its rate counter.
var rateCounter = family.Table(config.RateLimitsTable, "dynamodb:UpdateItem")

// toolSpec is one tool function, derived from its family and its contract.
type toolSpec struct {
	Name           string
	Aliases        []string
	TimeoutSeconds float64
	MemoryMB       float64
	Grants         []family.Grant    // the rate counter first, then the family's grants for this tool
	Env            map[string]string // the family's fixed settings and the deployment's chosen ones
}

// tools drives every tool function, its routes and its permissions.
var tools = mustToolSpecs(toolset.Families)

func mustToolSpecs(families []family.Family) []toolSpec {
	set, err := schema.Load(contracts.FS)
	if err != nil {
		panic(fmt.Sprintf("load contracts: %v", err))
	}
	specs, err := toolSpecs(families, set, os.Getenv)
	if err != nil {
		panic(err)
	}
	return specs
}

// toolSpecs derives one toolSpec per tool of the families; getenv reads the
// deployment's settings (os.Getenv when synthesizing).
func toolSpecs(families []family.Family, set *schema.Set, getenv func(string) string) ([]toolSpec, error) {
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
				Env:            settings(f, getenv),
			})
		}
	}
	return specs, nil
}

// settings is a tool function's fixed configuration: the family's Env, and
// each deployment setting (common or the family's) that getenv has.
func settings(f family.Family, getenv func(string) string) map[string]string {
	env := map[string]string{}
	for k, v := range f.Env {
		env[k] = v
	}
	for _, name := range append(slices.Clone(commonSettings), f.Settings...) {
		if v := getenv(name); v != "" {
			env[name] = v
		}
	}
	if len(env) == 0 {
		return nil
	}
	return env
}
