package fileio

import (
	"testing"

	"github.com/toolshed/toolshed/shared/workspace"
)

func TestQuotaSettings(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    workspace.Quota
		wantErr bool
	}{
		{"default: 100 MiB in 1,000 files", nil, workspace.Quota{Bytes: 100 << 20, Files: 1000}, false},
		{"set", map[string]string{"TOOLSHED_WORKSPACE_QUOTA_BYTES": "1048576", "TOOLSHED_WORKSPACE_QUOTA_FILES": "50"},
			workspace.Quota{Bytes: 1 << 20, Files: 50}, false},
		{"zero bytes", map[string]string{"TOOLSHED_WORKSPACE_QUOTA_BYTES": "0"}, workspace.Quota{}, true},
		{"words", map[string]string{"TOOLSHED_WORKSPACE_QUOTA_BYTES": "lots"}, workspace.Quota{}, true},
		{"negative files", map[string]string{"TOOLSHED_WORKSPACE_QUOTA_FILES": "-1"}, workspace.Quota{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := quotaOf(func(k string) string { return tt.env[k] })
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error: %v", err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
