package toolkit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing/fstest"

	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolkit"
)

// upperContract is a tool contract as contracts/<name>.json holds it: the
// pipeline validates input and output against its schemas and enforces
// its timeout and rate limit.
const upperContract = `{"name":"upper","title":"Upper","description":"Upper-cases a text.","timeoutMs":1000,
	"rateLimit":{"requestsPerMinute":60},
	"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false},
	"inputSchema":{"type":"object","properties":{"text":{"type":"string","minLength":1}},"required":["text"],"additionalProperties":false},
	"outputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},
	"examples":[]}`

type upperIn struct {
	Text string `json:"text"`
}

type upperOut struct {
	Text string `json:"text"`
}

// upper is the tool's handler: it sees input the contract has accepted,
// decoded into its own type, and returns data the pipeline checks against
// the output schema.
func upper(_ context.Context, _ toolkit.Call, in upperIn) (toolkit.Result, error) {
	return toolkit.Result{Data: upperOut{Text: strings.ToUpper(in.Text)}, Message: "Text upper-cased"}, nil
}

// A pipeline joins handlers with their contracts. Every route (MCP, /v1,
// a Lambda invocation) calls Invoke, so each call is limited, validated,
// timed and answered in one vocabulary the same way.
func ExampleNewPipeline() {
	contracts, err := schema.Load(fstest.MapFS{"upper.json": {Data: []byte(upperContract)}})
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := toolkit.NewPipeline(contracts, []toolkit.Tool{{Name: "upper", Handler: toolkit.Typed(upper)}}, toolkit.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, args := range []string{`{"text":"hello"}`, `{"text":""}`} {
		out := p.Invoke(context.Background(), toolkit.Request{Tool: "upper", Args: json.RawMessage(args), Tenant: "demo"})
		if out.OK {
			fmt.Printf("ok: %s (%s)\n", out.Result, out.Message)
		} else {
			fmt.Printf("failed: %s: %s\n", out.Error.Code, out.Error.Message)
		}
	}
	// Output:
	// ok: {"text":"HELLO"} (Text upper-cased)
	// failed: INVALID_INPUT: text: must not be empty or only whitespace
}
