package deploy_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/contracts"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/deploy"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/schema"
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
	got := deploy.Env(deploy.Function{Name: "echo", Family: echo, Tools: echo.Tools}, deploy.Deployment{
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

// chorus is a family deployed as one function, whose tools read and may
// do different things.
var chorus = family.Family{Name: "chorus", Tools: []string{"sing", "hum", "rest"}, OneFunction: true,
	Grants: []family.Grant{
		family.Objects("songs/", "s3:GetObject").For("sing"),
		family.Table(config.TasksTable, "dynamodb:Query").For("hum", "sing"),
		family.List("songs/"),
	},
	Settings: []family.Setting{family.Only(voice, "sing"), family.Only(token, "hum")}}

func TestFunctions(t *testing.T) {
	fns := deploy.Functions([]family.Family{echo, chorus, {Name: "pair", Tools: []string{"a", "b"}}})
	var got []string
	for _, fn := range fns {
		got = append(got, fn.Name+"="+config.ToolValue(fn.Tools))
	}
	if want := []string{"echo=echo", "chorus=sing,hum,rest", "a=a", "b=b"}; !slices.Equal(got, want) {
		t.Errorf("functions %v, want %v", got, want)
	}
	fn, ok := deploy.FunctionOf([]family.Family{echo, chorus}, "hum")
	if !ok || fn.Name != "chorus" {
		t.Fatalf("FunctionOf(hum) = %+v, %v; want the chorus function", fn, ok)
	}
	var grants []string
	for _, g := range deploy.Grants(fn) {
		grants = append(grants, g.Prefix+string(g.Table)+":"+strings.Join(g.Actions, ","))
	}
	// Each grant once, though two of its tools have the table's.
	if want := []string{"RateLimits:dynamodb:UpdateItem", "songs/:s3:GetObject", "Tasks:dynamodb:Query", "songs/:s3:ListBucket"}; !slices.Equal(grants, want) {
		t.Errorf("grants %v, want %v", grants, want)
	}
	chosen := map[string]string{"ECHO_VOICE": "bass", "ECHO_TOKEN": "ssm:/echo/token"}
	env := deploy.Env(fn, deploy.Deployment{
		TableName: func(t config.Table) string { return "table-" + string(t) },
		Bucket:    "the-bucket",
		Getenv:    func(k string) string { return chosen[k] },
	})
	want := map[string]string{"TOOLSHED_TOOL": "sing,hum,rest", "TOOLSHED_STORE": "dynamodb", "TOOLSHED_RATE_TABLE": "table-RateLimits",
		"TOOLSHED_TASKS_TABLE": "table-Tasks", "TOOLSHED_BUCKET": "the-bucket", "ECHO_VOICE": "bass",
		secrets.EnvVar: `{"ECHO_TOKEN":"/echo/token"}`}
	if !maps.Equal(env, want) {
		t.Errorf("environment %v\nwant %v", env, want)
	}
}

// TestFunctionTimeout: a function serving several tools waits for the
// slowest.
func TestFunctionTimeout(t *testing.T) {
	set, err := schema.Load(contracts.FS)
	if err != nil {
		t.Fatal(err)
	}
	fn := deploy.Function{Name: "some", Family: family.Family{Name: "some"}, Tools: []string{"hello", "add_task"}}
	got, err := deploy.FunctionTimeout(fn, set)
	hello, _ := set.Get("hello")
	addTask, _ := set.Get("add_task")
	if want := deploy.Timeout(max(hello.TimeoutMs, addTask.TimeoutMs)); err != nil || got != want {
		t.Errorf("FunctionTimeout = %v, %v; want %v", got, err, want)
	}
	fn.Tools = append(fn.Tools, "no_such_tool")
	if _, err := deploy.FunctionTimeout(fn, set); err == nil || !strings.Contains(err.Error(), "no_such_tool") {
		t.Errorf("a tool without a contract: %v", err)
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
