package main

import (
	"testing"

	"github.com/toolshed/toolshed/shared/config"
)

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
