// Package hello implements the hello tool: a greeting that proves
// an agent can reach Toolshed. It has no side effects.
package hello

import (
	"context"
	"strings"

	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/wiring"
)

// Family registers hello; it needs nothing from the outside world.
var Family = family.Family{
	Name:  "hello",
	Tools: []string{"hello"},
	New: func(context.Context, *wiring.Env) ([]toolkit.Tool, error) {
		return []toolkit.Tool{New()}, nil
	},
}

type input struct {
	Name string `json:"name"`
}

type output struct {
	Greeting string `json:"greeting"`
}

// New returns the hello tool.
func New() toolkit.Tool {
	return toolkit.Tool{Name: "hello", Handler: toolkit.Typed(greet)}
}

func greet(_ context.Context, _ toolkit.Call, in input) (toolkit.Result, error) {
	name := strings.TrimSpace(in.Name)
	return toolkit.Result{Data: output{Greeting: "Hello, " + name + "!"}, Message: "Greeting created"}, nil
}
