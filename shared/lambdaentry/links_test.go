package lambdaentry_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestFunctionsLinkWhatTheyUse: a package's init runs at every cold start
// of a function that links it, used or not. The authorizer, in front of
// every request, links neither the tool pipeline (its JSON Schema
// validator compiles its meta-schemas at init) nor the Parameter Store
// client; the gateway, which reads no secret settings, does not link that
// client either. The tool functions read precise indexes and never link
// the SCIP bindings, which only the indexer, converting them, needs.
func TestFunctionsLinkWhatTheyUse(t *testing.T) {
	const (
		module    = "github.com/toolshed/toolshed/"
		validator = "github.com/santhosh-tekuri/jsonschema/v5"
		ssm       = "github.com/aws/aws-sdk-go-v2/service/ssm"
		scip      = "github.com/sourcegraph/scip/bindings/go/scip"
	)
	tests := []struct {
		function     string
		links, never []string
	}{
		{"authorizer", []string{module + "shared/lambdaentry"}, []string{validator, ssm, module + "shared/toolkit",
			module + "shared/httpapi", module + "shared/lambdaevent", module + "shared/secrets/parameterstore"}},
		{"gateway", []string{module + "shared/lambdaentry", validator}, []string{ssm}},
		{"tool", []string{module + "shared/lambdaentry", ssm, module + "shared/precisebucket"}, []string{scip}},
		{"indexer", []string{module + "shared/lambdaentry", ssm, scip}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.function, func(t *testing.T) {
			// As make builds a function for Lambda (cgo's packages are
			// the same for this question).
			list := exec.Command("go", "list", "-deps", "-tags", "lambda.norpc", module+"functions/"+tt.function)
			list.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
			out, err := list.Output()
			if err != nil {
				t.Fatalf("go list: %v", err)
			}
			deps := strings.Fields(string(out))
			for _, p := range tt.links {
				if !slices.Contains(deps, p) {
					t.Errorf("%s does not link %s", tt.function, p)
				}
			}
			for _, p := range tt.never {
				if slices.Contains(deps, p) {
					t.Errorf("%s links %s", tt.function, p)
				}
			}
		})
	}
}
