package main

import (
	"slices"
	"testing"

	"github.com/toolshed/toolshed/shared/config"
)

// statements returns a function's Allow statements (X-Ray aside) as
// written in the template: actions, resources and conditions.
func statements(t *testing.T, fnID string) []map[string]any {
	t.Helper()
	role := synth.Resources[fnID].Properties["Role"].(map[string]any)["Fn::GetAtt"].([]any)[0].(string)
	var out []map[string]any
	for _, p := range resourcesOfType("AWS::IAM::Policy") {
		if !slices.ContainsFunc(asList(p.Properties["Roles"]), func(r any) bool { return equalJSON(r, ref(role)) }) {
			continue
		}
		for _, s := range asList(p.Properties["PolicyDocument"].(map[string]any)["Statement"]) {
			stmt := s.(map[string]any)
			var actions []string
			for _, a := range asList(stmt["Action"]) {
				actions = append(actions, a.(string))
			}
			if isXRay(actions) {
				continue
			}
			out = append(out, stmt)
		}
	}
	return out
}

// TestWebFetchAndFileIOPolicies spells out the two roles in full: web-fetch
// may touch nothing but its rate counter; file-io may also get and put
// objects under workspace/ and list that prefix, nothing else.
func TestWebFetchAndFileIOPolicies(t *testing.T) {
	rateTable := logicalID(t, string(config.RateLimitsTable)+"Table")
	bucket := logicalID(t, "SnapshotBucket")
	rate := map[string]any{"Effect": "Allow", "Action": "dynamodb:UpdateItem", "Resource": getAttArn(rateTable)}
	tests := map[string][]map[string]any{
		"web-fetch": {rate},
		"file-io": {
			rate,
			{"Effect": "Allow", "Action": []any{"s3:GetObject", "s3:PutObject"},
				"Resource": map[string]any{"Fn::Join": []any{"", []any{getAttArn(bucket), "/workspace/*"}}}},
			{"Effect": "Allow", "Action": "s3:ListBucket", "Resource": getAttArn(bucket),
				"Condition": map[string]any{"StringLike": map[string]any{"s3:prefix": []any{"workspace/*"}}}},
		},
	}
	for name, want := range tests {
		if got := statements(t, functionID(t, name)); !equalJSON(got, want) {
			t.Errorf("%s policy:\n got %v\nwant %v", name, got, want)
		}
	}
}
