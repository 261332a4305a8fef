package deploy_test

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/secrets"
	"github.com/toolshed/toolshed/shared/settings"
)

var voice = settings.New("ECHO_VOICE", "tenor", "the voice", func(s string) (string, error) {
	if s != "bass" && s != "tenor" {
		return "", errTone
	}
	return s, nil
})

var errTone = errors.New("use bass or tenor")

// token is a secret setting.
var token = settings.New("ECHO_TOKEN", "", "the token", settings.Text).Secret()

var echo = family.Family{Name: "echo", Tools: []string{"echo"}, ReadsRepositories: true,
	Grants:   []family.Grant{family.Objects("workspace/", "s3:GetObject")},
	Env:      map[string]string{"ECHO_MODE": "loud"},
	Settings: family.Every(voice, token)}

func TestEnv(t *testing.T) {
	chosen := map[string]string{"ECHO_VOICE": "bass", "TOOLSHED_RATE_LIMITS": "echo=5", "TOOLSHED_REPO_DENY": "*.db", "OTHER": "x"}
	got := deploy.Env(echo, "echo", deploy.Deployment{
		TableName:   func(t config.Table) string { return "table-" + string(t) },
		Bucket:      "the-bucket",
		DefaultRepo: "shared",
		Getenv:      func(k string) string { return chosen[k] },
	})
	want := map[string]string{"TOOLSHED_TOOL": "echo", "TOOLSHED_STORE": "dynamodb", "TOOLSHED_RATE_TABLE": "table-RateLimits",
		"TOOLSHED_BUCKET": "the-bucket", "TOOLSHED_DEFAULT_REPO": "shared", "ECHO_MODE": "loud", "ECHO_VOICE": "bass",
		"TOOLSHED_RATE_LIMITS": "echo=5", "TOOLSHED_REPO_DENY": "*.db"}
	if !maps.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

// TestSecretSettings: a secret setting reaches the function as the name
// of its parameter, in secrets.EnvVar, never as a value; anything but a
// reference is refused and never written.
func TestSecretSettings(t *testing.T) {
	for _, tt := range []struct {
		chosen string
		want   map[string]string // the settings' part of the environment
	}{
		{"ssm:/echo/token", map[string]string{secrets.EnvVar: `{"ECHO_TOKEN":"/echo/token"}`}},
		{"plain-secret-value", map[string]string{}},
		{"", map[string]string{}},
	} {
		getenv := func(k string) string { return map[string]string{"ECHO_TOKEN": tt.chosen}[k] }
		if got := deploy.SettingsEnv(echo.AllSettings(), getenv); !maps.Equal(got, tt.want) {
			t.Errorf("%q: environment %v, want %v", tt.chosen, got, tt.want)
		}
	}
}

func TestCheckSettings(t *testing.T) {
	for _, tt := range []struct {
		name    string
		chosen  map[string]string
		wantErr string
	}{
		{"nothing chosen", nil, ""},
		{"valid", map[string]string{"ECHO_VOICE": "bass", "ECHO_TOKEN": "ssm:/echo/token",
			"TOOLSHED_RATE_LIMITS": "echo=5", "TOOLSHED_LOG_LEVEL": "debug", "TOOLSHED_REPO_DENY": "*.db"}, ""},
		{"declared setting", map[string]string{"ECHO_VOICE": "alto"}, `ECHO_VOICE="alto": use bass or tenor`},
		{"a secret's value", map[string]string{"ECHO_TOKEN": "hunter2"}, "ECHO_TOKEN is a secret: a secret is never written into the deployment"},
		{"rate limits", map[string]string{"TOOLSHED_RATE_LIMITS": "echo=lots"}, `TOOLSHED_RATE_LIMITS="echo=lots": "echo=lots" is not tool=positive-number`},
		{"log level", map[string]string{"TOOLSHED_LOG_LEVEL": "loud"}, "TOOLSHED_LOG_LEVEL"},
		{"repository deny list", map[string]string{"TOOLSHED_REPO_DENY": "a\\b"}, "TOOLSHED_REPO_DENY"},
		{"a negation in the deny list", map[string]string{"TOOLSHED_REPO_DENY": "*.db,!id_rsa"}, "the deny list cannot be narrowed"},
		{"a process setting no deployment chooses", map[string]string{"TOOLSHED_STORE": "postgres"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := deploy.CheckSettings(echo.AllSettings(), func(k string) string { return tt.chosen[k] })
			if got := errString(err); tt.wantErr == "" && got != "" || !strings.Contains(got, tt.wantErr) {
				t.Errorf("error %q, want one containing %q", got, tt.wantErr)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	if got := deploy.Timeout(12500); got.Seconds() != 16 {
		t.Errorf("Timeout(12500) = %v, want 16s (13 s rounded up, plus the 3 s margin)", got)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
