package config_test

import (
	"fmt"
	"testing"

	"github.com/toolshed/toolshed/shared/config"
)

func from(env map[string]string) (config.Config, error) {
	return config.FromEnv(func(k string) string { return env[k] })
}

func TestNetToolSettings(t *testing.T) {
	c, err := from(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.FetchAllowedDomains != nil || c.FetchRejectTypes != nil {
		t.Errorf("defaults: allowlist %q, reject types %q; want both unset", c.FetchAllowedDomains, c.FetchRejectTypes)
	}
	if want := (config.Quota{Bytes: 100 << 20, Files: 1000}); c.WorkspaceQuota != want {
		t.Errorf("default quota %+v, want %+v", c.WorkspaceQuota, want)
	}

	c, err = from(map[string]string{
		"TOOLSHED_FETCH_ALLOWED_DOMAINS": " example.com, *.example.org ,,",
		"TOOLSHED_FETCH_REJECT_TYPES":    "image/*,text/csv",
		"TOOLSHED_WORKSPACE_QUOTA_BYTES": "1048576",
		"TOOLSHED_WORKSPACE_QUOTA_FILES": "50",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%q %q %+v", c.FetchAllowedDomains, c.FetchRejectTypes, c.WorkspaceQuota)
	if want := `["example.com" "*.example.org"] ["image/*" "text/csv"] {Bytes:1048576 Files:50}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}

	c, _ = from(map[string]string{"TOOLSHED_FETCH_REJECT_TYPES": "none"})
	if c.FetchRejectTypes == nil || len(c.FetchRejectTypes) != 0 {
		t.Errorf("none: reject types %#v, want an empty list", c.FetchRejectTypes)
	}

	for _, bad := range []map[string]string{
		{"TOOLSHED_WORKSPACE_QUOTA_BYTES": "0"},
		{"TOOLSHED_WORKSPACE_QUOTA_BYTES": "lots"},
		{"TOOLSHED_WORKSPACE_QUOTA_FILES": "-1"},
	} {
		if _, err := from(bad); err == nil {
			t.Errorf("%v: want an error", bad)
		}
	}
}
