package httpapi

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/toolshed/toolshed/shared/caller"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// A client may narrow the tools its requests see and call, as large MCP
// servers let it: a subset by name, the read-only view, or both.
const (
	// ToolsHeader selects tools by name (canonical or alias), comma-separated.
	ToolsHeader = "X-MCP-Tools"
	// ToolsParam selects tools as ToolsHeader does, in the query
	// (/mcp?tools=grep_codebase,read_file), for clients that cannot set headers.
	ToolsParam = "tools"
	// ReadonlyHeader, when "true", keeps only the tools annotated readOnlyHint.
	ReadonlyHeader = "X-MCP-Readonly"
	// ReadonlyPath is /mcp showing only the read-only tools.
	ReadonlyPath = "/mcp/readonly"
)

// toolSelection turns a request's selection into tool filters
// (caller.WithToolFilter): tools/list then lists only the selected tools,
// and calling another one is TOOL_NOT_FOUND, on every route.
type toolSelection struct {
	tools    toolkit.Catalog
	readOnly map[string]bool // canonical names of the served read-only tools
}

func newToolSelection(tools toolkit.Catalog) toolSelection {
	sel := toolSelection{tools: tools, readOnly: map[string]bool{}}
	for _, c := range tools.Served() {
		if c.Annotations.ReadOnlyHint {
			sel.readOnly[c.Name] = true
		}
	}
	return sel
}

// withSelection runs next with the request's tool selection in its
// context; a selection that cannot be read (an unknown name, a read-only
// value other than true or false) is answered with 400 INVALID_INPUT.
func (s *server) withSelection(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		filters, err := s.selection.filters(r)
		if err != nil {
			s.fail(w, r, http.StatusBadRequest, toolerr.From(err))
			return
		}
		for _, f := range filters {
			ctx = caller.WithToolFilter(ctx, f)
		}
		next(w, r.WithContext(ctx))
	}
}

// filters are the tool filters r asks for: one per list of names it
// gives (header, query; both apply when both are given) and one for the
// read-only view.
func (sel toolSelection) filters(r *http.Request) ([]caller.ToolFilter, error) {
	var out []caller.ToolFilter
	lists := []struct {
		source string
		values []string
	}{
		{ToolsHeader, r.Header.Values(ToolsHeader)},
		{"?" + ToolsParam, r.URL.Query()[ToolsParam]},
	}
	for _, l := range lists {
		if len(l.values) == 0 {
			continue
		}
		names, err := sel.names(l.source, strings.Join(l.values, ","))
		if err != nil {
			return nil, err
		}
		out = append(out, only(names, l.source))
	}
	readOnly, err := readOnlyAsked(r)
	if err != nil {
		return nil, err
	}
	if readOnly {
		out = append(out, sel.onlyReadOnly)
	}
	return out, nil
}

// names reads a comma-separated list of tool names into canonical names.
// A name no contract has is an error that lists the tools served here.
func (sel toolSelection) names(source, list string) ([]string, error) {
	var names []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		canonical, _ := sel.tools.Has(n)
		if canonical == "" {
			return nil, toolerr.New(toolerr.InvalidInput, "%s: no tool is named %q; the tools are %s",
				source, n, strings.Join(sel.tools.Names(), ", ")).With("tool", n)
		}
		names = append(names, canonical)
	}
	if len(names) == 0 {
		return nil, toolerr.New(toolerr.InvalidInput, "%s: names no tool; give tool names separated by commas, e.g. %s: grep_codebase,read_file",
			source, ToolsHeader)
	}
	return names, nil
}

// only is the filter of a list of selected tools.
func only(names []string, source string) caller.ToolFilter {
	return func(tool string) error {
		if slices.Contains(names, tool) {
			return nil
		}
		return toolerr.New(toolerr.ToolNotFound, "tool %q is not among the tools this request selected (%s: %s)",
			tool, source, strings.Join(names, ",")).With("tool", tool)
	}
}

func (sel toolSelection) onlyReadOnly(tool string) error {
	if sel.readOnly[tool] {
		return nil
	}
	return toolerr.New(toolerr.ToolNotFound, "tool %q changes things, and this request asked for the read-only tools (%s: true or %s)",
		tool, ReadonlyHeader, ReadonlyPath).With("tool", tool)
}

// readOnlyAsked reports whether r asks for the read-only view: the
// ReadonlyPath, or ReadonlyHeader true.
func readOnlyAsked(r *http.Request) (bool, error) {
	if r.URL.Path == ReadonlyPath {
		return true, nil
	}
	v := r.Header.Get(ReadonlyHeader)
	if v == "" {
		return false, nil
	}
	on, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, toolerr.New(toolerr.InvalidInput, "%s: must be true or false, got %q", ReadonlyHeader, v)
	}
	return on, nil
}
