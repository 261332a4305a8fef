package family_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing/fstest"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/githistory"
	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/wiring"
)

// marks is the family's one setting, declared once where the family is:
// its name, default, meaning (the row docs/configuration.md shows) and
// parser.
var marks = settings.New("TOOLSHED_SHOUT_MARKS", "1", "how many exclamation marks shout adds", settings.Positive)

// shout is a family as shared/tools/<family>/ declares it: the tools it
// serves and a constructor that reads its settings and asks the Env for
// what it needs (here nothing else). Adding it to toolset.Families serves
// it locally and deploys it as a Lambda.
var shout = family.Family{
	Name:     "shout",
	Tools:    []string{"shout"},
	Settings: family.Every(marks), // deployed with the family's functions, listed in the docs
	New: func(_ context.Context, env *wiring.Env) ([]toolkit.Tool, error) {
		n, err := marks.Get(env.Getenv)
		if err != nil {
			return nil, err
		}
		type input struct {
			Text string `json:"text"`
		}
		handle := func(_ context.Context, _ toolkit.Call, in input) (toolkit.Result, error) {
			return toolkit.Result{Data: map[string]string{"text": strings.ToUpper(in.Text) + strings.Repeat("!", n)}}, nil
		}
		return []toolkit.Tool{{Name: "shout", Handler: toolkit.Typed(handle)}}, nil
	},
}

// shoutContract is the tool's contracts/shout.json.
const shoutContract = `{"name":"shout","title":"Shout","description":"Shouts a text.","timeoutMs":1000,
	"rateLimit":{"requestsPerMinute":60},
	"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false},
	"inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false},
	"outputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]},
	"examples":[]}`

// Build runs a family's constructor with the process's Env: what the
// local server and each tool's Lambda do with every family they serve.
// A bad setting stops the build with the setting's name.
func ExampleBuild() {
	contracts, err := schema.Load(fstest.MapFS{"shout.json": {Data: []byte(shoutContract)}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, value := range []string{"3", "none"} {
		env := wiring.NewEnv(config.Config{}, nil)
		env.Getenv = func(name string) string {
			if name == marks.Name() {
				return value
			}
			return ""
		}
		tools, err := family.Build(context.Background(), []family.Family{shout}, env)
		if err != nil {
			fmt.Println(err)
			continue
		}
		p, err := toolkit.NewPipeline(contracts, tools, toolkit.Options{})
		if err != nil {
			fmt.Println(err)
			continue
		}
		out := p.Invoke(context.Background(), toolkit.Request{Tool: "shout", Args: json.RawMessage(`{"text":"hello"}`), Tenant: "demo"})
		fmt.Printf("%s\n", out.Result)
	}
	// Output:
	// {"text":"HELLO!!!"}
	// build shout tools: TOOLSHED_SHOUT_MARKS="none": use a positive whole number
}

// ReadsHistory adds to a family what its functions need to read pushed
// histories, the grant for the named tools only, and leaves the family it
// was given as it was.
func ExampleReadsHistory() {
	files := family.Family{Name: "files", Tools: []string{"read", "write"},
		Grants: []family.Grant{family.Objects("snapshots/", "s3:GetObject")}}
	f := family.ReadsHistory(files, "read")
	fmt.Println(f.Layers, f.StorageMB == githistory.CopyStorageMB)
	for _, tool := range f.Tools {
		fmt.Println(tool, len(f.GrantsFor(tool)))
	}
	fmt.Println(len(files.Grants), files.Layers)
	// Output:
	// [git] true
	// read 3
	// write 1
	// 1 []
}
