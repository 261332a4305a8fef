package webfetch_test

import (
	"fmt"
	"testing"

	"github.com/toolshed/toolshed/shared/tools/webfetch"
)

func TestSettings(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string // allowlist and reject types, %#v
	}{
		{"defaults: every host, the default types", nil, `[]string(nil) []string(nil)`},
		{"lists", map[string]string{
			"TOOLSHED_FETCH_ALLOWED_DOMAINS": " example.com, *.example.org ,,",
			"TOOLSHED_FETCH_REJECT_TYPES":    "image/*,text/csv",
		}, `[]string{"example.com", "*.example.org"} []string{"image/*", "text/csv"}`},
		{"none refuses no type", map[string]string{"TOOLSHED_FETCH_REJECT_TYPES": "none"}, `[]string(nil) []string{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			domains, err1 := webfetch.AllowedDomains.Get(getenv)
			types, err2 := webfetch.RejectTypes.Get(getenv)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if got := fmt.Sprintf("%#v %#v", domains, types); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
