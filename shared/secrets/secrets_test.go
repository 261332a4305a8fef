package secrets_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/secrets"
)

func TestParseRef(t *testing.T) {
	tests := []struct {
		ref, want, wantErr string
	}{
		{"ssm:/toolshed/embed-key", "/toolshed/embed-key", ""},
		{"ssm:embed_key.v2", "embed_key.v2", ""},
		{"ssm:/aws/reference/secretsmanager/Toolshed-cursor-key", "/aws/reference/secretsmanager/Toolshed-cursor-key", ""},
		{"sk-live-1234", "", "never written into the deployment"},
		{"ssm:", "", "is not a parameter name"},
		{"ssm:toolshed/embed-key", "", "is not a parameter name"},
		{"ssm:/toolshed//key", "", "is not a parameter name"},
		{"ssm:/key with space", "", "is not a parameter name"},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			got, err := secrets.ParseRef(tt.ref)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %q, %v; want an error about %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestReferencedSecret(t *testing.T) {
	for parameter, want := range map[string]string{
		"/aws/reference/secretsmanager/Toolshed-cursor-key": "Toolshed-cursor-key",
		"/aws/reference/secretsmanager/":                    "",
		"/toolshed/embed-key":                               "",
		"aws/reference/secretsmanager/x":                    "",
	} {
		got, ok := secrets.ReferencedSecret(parameter)
		if got != want || ok != (want != "") {
			t.Errorf("ReferencedSecret(%q) = %q, %v; want %q", parameter, got, ok, want)
		}
	}
}

func TestLoad(t *testing.T) {
	stored := map[string]string{"/toolshed/embed-key": "sk-one", "/toolshed/other": "two"}
	fetch := func(_ context.Context, name string) (string, error) {
		v, ok := stored[name]
		if !ok {
			return "", errors.New("ParameterNotFound")
		}
		return v, nil
	}
	tests := []struct {
		name    string
		env     string // EnvVar's value
		want    map[string]string
		wantErr string
	}{
		{"none", "", map[string]string{}, ""},
		{"two", secrets.Encode(map[string]string{"A_KEY": "/toolshed/embed-key", "B_KEY": "/toolshed/other"}),
			map[string]string{"A_KEY": "sk-one", "B_KEY": "two"}, ""},
		{"missing parameter", `{"A_KEY":"/toolshed/gone"}`, nil, "read A_KEY from parameter /toolshed/gone: ParameterNotFound"},
		{"not JSON", `A_KEY=/x`, nil, secrets.EnvVar},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				switch k {
				case secrets.EnvVar:
					return tt.env
				case "C_SETTING":
					return "plain"
				}
				return ""
			}
			overlaid, err := secrets.Load(context.Background(), getenv, fetch)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one about %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, k := range []string{"A_KEY", "B_KEY"} {
				if v := overlaid(k); v != "" {
					got[k] = v
				}
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("read %v; want %v", got, tt.want)
			}
			if overlaid("C_SETTING") != "plain" {
				t.Errorf("a setting that is not a secret reads %q, want it from getenv", overlaid("C_SETTING"))
			}
		})
	}
}
