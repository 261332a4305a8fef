package toolkit

import (
	"context"
	"fmt"
	"slices"

	"github.com/toolshed/toolshed/shared/caller"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
)

// Catalog is a set of tools that can be listed and called: an Invoker for
// the served tools and their contracts. The in-process Pipeline and the
// Lambda invoker (shared/lambdainvoke) are both one; the MCP server lists
// and calls the tools of one.
type Catalog interface {
	Invoker
	// Served returns the contracts of the served tools, sorted by name.
	Served() []*schema.Contract
}

// ServedTools is the served tools with their contracts, built once from
// the contract set and the tools' names. It answers Has, Names and Served
// for both Catalogs, which embed it.
type ServedTools struct {
	contracts *schema.Set
	names     []string                    // canonical, sorted
	byName    map[string]*schema.Contract // canonical name → contract
}

// NewServedTools serves the tools named: each must be the canonical name
// of a contract in contracts, and named once. An error starts with the
// quoted name, for the caller to say what named it.
func NewServedTools(contracts *schema.Set, names []string) (ServedTools, error) {
	s := ServedTools{contracts: contracts, byName: map[string]*schema.Contract{}}
	for _, n := range names {
		c, ok := contracts.Get(n)
		if !ok || c.Name != n {
			return ServedTools{}, fmt.Errorf("%q has no contract in contracts/", n)
		}
		if _, dup := s.byName[n]; dup {
			return ServedTools{}, fmt.Errorf("%q is named twice", n)
		}
		s.byName[n] = c
		s.names = append(s.names, n)
	}
	slices.Sort(s.names)
	return s, nil
}

// Has reports whether a tool (or alias) is served, with its canonical
// name; for a tool that has a contract but is not served, the canonical
// name and false.
func (s ServedTools) Has(name string) (canonical string, ok bool) {
	c, found := s.contracts.Get(name)
	if !found {
		return "", false
	}
	_, ok = s.byName[c.Name]
	return c.Name, ok
}

// Resolve names the served tool a request asks for (its canonical name or
// an alias) and checks that the request may call it (caller.CheckTool):
// the canonical name, or TOOL_NOT_FOUND or the filter's error. The
// canonical name is "" when no served tool has the name.
func (s ServedTools) Resolve(ctx context.Context, name string) (string, error) {
	canonical, ok := s.Has(name)
	if !ok {
		return "", toolerr.New(toolerr.ToolNotFound, "no tool named %q is served here", name).
			With("tool", name).With("available", s.Visible(ctx))
	}
	return canonical, caller.CheckTool(ctx, canonical)
}

// Visible returns the canonical names of the served tools the request in
// ctx may see, sorted.
func (s ServedTools) Visible(ctx context.Context) []string {
	var out []string
	for _, n := range s.names {
		if caller.CheckTool(ctx, n) == nil {
			out = append(out, n)
		}
	}
	return out
}

// Names returns the canonical names of the served tools, sorted.
func (s ServedTools) Names() []string { return slices.Clone(s.names) }

// Served returns the contracts of the served tools, sorted by name.
func (s ServedTools) Served() []*schema.Contract {
	out := make([]*schema.Contract, len(s.names))
	for i, n := range s.names {
		out[i] = s.byName[n]
	}
	return out
}

// contract returns the contract of a served tool by its canonical name.
func (s ServedTools) contract(name string) (*schema.Contract, bool) {
	c, ok := s.byName[name]
	return c, ok
}
