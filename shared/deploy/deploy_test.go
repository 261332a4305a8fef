package deploy_test

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/settings"
)

var voice = settings.New("ECHO_VOICE", "tenor", "the voice", func(s string) (string, error) {
	if s != "bass" && s != "tenor" {
		return "", errTone
	}
	return s, nil
})

var errTone = errors.New("use bass or tenor")

var echo = family.Family{Name: "echo", Tools: []string{"echo"}, ReadsRepositories: true,
	Grants:   []family.Grant{family.Objects("workspace/", "s3:GetObject")},
	Env:      map[string]string{"ECHO_MODE": "loud"},
	Settings: []settings.Setting{voice}}

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
	if names, want := deploy.SettingNames(echo), "TOOLSHED_RATE_LIMITS TOOLSHED_LOG_LEVEL TOOLSHED_REPO_DENY ECHO_VOICE"; strings.Join(names, " ") != want {
		t.Errorf("SettingNames = %v, want %s", names, want)
	}
}

func TestCheckSettings(t *testing.T) {
	for _, tt := range []struct {
		value   string
		wantErr string
	}{
		{"", ""},
		{"bass", ""},
		{"alto", `ECHO_VOICE="alto": use bass or tenor`},
	} {
		err := deploy.CheckSettings(echo.Settings, func(k string) string {
			if k == "ECHO_VOICE" {
				return tt.value
			}
			return ""
		})
		if got := errString(err); got != tt.wantErr {
			t.Errorf("%q: error %q, want %q", tt.value, got, tt.wantErr)
		}
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
