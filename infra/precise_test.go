package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/precisebucket"
	"github.com/toolshed/toolshed/shared/tools/navigate"
)

// TestPreciseGrants: the precise indexes in the bucket are read by the
// navigation functions, written by the indexer's functions (which convert
// them), and touched by no other function.
func TestPreciseGrants(t *testing.T) {
	read := []string{"s3:GetObject", "s3:ListBucket"}
	write := []string{"s3:AbortMultipartUpload", "s3:GetObject", "s3:ListBucket", "s3:PutObject"}
	want := map[string][]string{indexerDir: write, indexWorkerName: write, gatewayName: nil, authorizerDir: nil}
	for _, fn := range toolFunctions {
		want[fn.Name] = nil
		if fn.Family.Name == navigate.Family.Name {
			want[fn.Name] = read
		}
	}
	for name, actions := range want {
		var got []string
		for _, stmt := range statements(t, functionID(t, name)) {
			where, _ := json.Marshal([]any{stmt["Resource"], stmt["Condition"]})
			if strings.Contains(string(where), "/"+precisebucket.Prefix) || strings.Contains(string(where), `"`+precisebucket.Prefix) {
				got = append(got, actionsOf(stmt)...)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, actions) {
			t.Errorf("%s on %s*: %v, want %v", name, precisebucket.Prefix, got, actions)
		}
	}
}

// TestIndexWorkerStorage: the index worker, which converts precise
// indexes in /tmp, has the ephemeral storage that takes.
func TestIndexWorkerStorage(t *testing.T) {
	for name, want := range map[string]any{indexWorkerName: map[string]any{"Size": float64(deploy.IndexWorkerStorageMB)}, indexerDir: nil} {
		if got := synth.Resources[functionID(t, name)].Properties["EphemeralStorage"]; !equalJSON(got, want) {
			t.Errorf("%s's ephemeral storage: %v, want %v", name, got, want)
		}
	}
}
