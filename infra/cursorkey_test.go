package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/secrets"
	"github.com/toolshed/toolshed/shared/wiring"
)

// testCursorKeyParameter is where the stack under test's functions read
// the cursor key: Parameter Store's reference to the secret it generates.
const testCursorKeyParameter = secrets.SecretsManagerPrefix + stackName + "-cursor-key"

// variantCursorKeyParameter is the parameter the variant stack names.
const variantCursorKeyParameter = "/ops/cursor-key"

// paging are the tools that take a cursor: their functions, and no
// other, are given the cursor key.
var paging = []string{"list_tasks", "read_memory", "list_files", "find_references", "find_symbols", "list_repos", "find_implementations", "find_callers",
	"list_commits", "get_commit", "compare", "search_commits", "list_refs"}

// pages reports whether a tool function serves one of paging.
func pages(fn *functionOfTools) bool {
	return slices.ContainsFunc(fn.Tools, func(tool string) bool { return slices.Contains(paging, tool) })
}

// secretParameters is what TOOLSHED_SECRET_PARAMETERS holds for a tool
// function of the stack under test: the embedder's key for
// context_search's, the cursor key for those that page.
func secretParameters(fn *functionOfTools) map[string]string {
	params := map[string]string{}
	if fn.Family.Name == "contextsearch" {
		params["TOOLSHED_EMBED_KEY"] = testKeyParameter
	}
	if pages(fn) {
		params[wiring.CursorKey.Name()] = testCursorKeyParameter
	}
	return params
}

// cursorKeyGrants are the statements of a function that reads the
// generated cursor key: the reference's parameter, and its secret.
func cursorKeyGrants() map[string][]string {
	return map[string][]string{
		parameterArnJSON(testCursorKeyParameter): {"ssm:GetParameter"},
		secretArnJSON(stackName + "-cursor-key"): {"secretsmanager:GetSecretValue"},
	}
}

// secretArnJSON is the ARN pattern of a Secrets Manager secret's name, as
// the template writes it.
func secretArnJSON(name string) string {
	b, _ := json.Marshal(map[string]any{"Fn::Join": []any{"", []any{"arn:", ref("AWS::Partition"), ":secretsmanager:", ref("AWS::Region"),
		":", ref("AWS::AccountId"), ":secret:" + name + "-??????"}}})
	return string(b)
}

// TestCursorKey: one key for every function that pages, never written
// into the template: unless the deployment names its own parameter, a
// Secrets Manager secret CloudFormation generates (gone with the stack),
// which the functions of exactly the tools that page may read, through
// the parameter that refers to it, and no other function may (not even
// those of the other tools of their families).
func TestCursorKey(t *testing.T) {
	generated := resourcesOfType("AWS::SecretsManager::Secret")
	if len(generated) != 1 {
		t.Fatalf("%d secrets, want the cursor key's", len(generated))
	}
	for _, s := range generated {
		gen, _ := s.Properties["GenerateSecretString"].(map[string]any)
		if s.Properties["Name"] != stackName+"-cursor-key" || s.Properties["SecretString"] != nil ||
			gen["PasswordLength"] != 64.0 || gen["ExcludePunctuation"] != true || s.DeletionPolicy != "Delete" {
			t.Errorf("the cursor key's secret: %+v", s)
		}
	}
	grants := cursorKeyGrants()
	for _, fn := range toolFunctions {
		got := roleActions(t, functionID(t, fn.Name))
		for res, actions := range grants {
			if want := map[bool][]string{true: actions}[pages(fn)]; !slices.Equal(got[res], want) {
				t.Errorf("%s may %v on %s, want %v", fn.Name, got[res], res, want)
			}
		}
	}
	for _, name := range otherFunctionNames {
		got := roleActions(t, functionID(t, name))
		for res := range grants {
			if got[res] != nil {
				t.Errorf("%s may %v on %s", name, got[res], res)
			}
		}
	}

	// A deployment that names its own parameter: no secret, and the
	// functions read that parameter.
	v := variantTemplate(t)
	if n := len(resourcesIn(v, "AWS::SecretsManager::Secret")); n != 0 {
		t.Errorf("the variant, which names its parameter, has %d secrets", n)
	}
	found := 0
	for id, fn := range resourcesIn(v, "AWS::Lambda::Function") {
		env, _ := fn.Properties["Environment"].(map[string]any)
		vars, _ := env["Variables"].(map[string]any)
		if vars[secrets.EnvVar] == nil {
			continue
		}
		found++
		var params map[string]string
		json.Unmarshal([]byte(vars[secrets.EnvVar].(string)), &params)
		if got := params[wiring.CursorKey.Name()]; got != variantCursorKeyParameter {
			t.Errorf("variant %s: %v", id, params)
		}
	}
	if want := len(slices.DeleteFunc(slices.Clone(toolFunctions), func(fn *functionOfTools) bool { return !pages(fn) })); found != want {
		t.Errorf("the variant: %d functions read secrets, want the %d that page", found, want)
	}
	if raw, _ := json.Marshal(v.Resources); strings.Contains(string(raw), "secretsmanager:") {
		t.Errorf("the variant grants Secrets Manager actions")
	}
}
