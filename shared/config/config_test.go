package config_test

import (
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/config"
)

func from(env map[string]string) (config.Config, error) {
	return config.FromEnv(func(k string) string { return env[k] })
}

func TestDefaults(t *testing.T) {
	c, err := from(nil)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"addr", c.Addr, "127.0.0.1:8000"},
		{"data dir", c.DataDir, config.DefaultDataDir},
		{"store", c.Store, config.StoreBolt},
		{"auth", c.Auth, config.AuthAuto},
		{"local tenant", c.LocalTenant, "local"},
		{"repos", c.Repos, []string{"."}},
		{"repo refresh", c.RepoRefresh, 5 * time.Second},
		{"repo max MB", c.RepoMaxMB, config.DefaultRepoMaxMB},
		{"repo cache MB", c.RepoCacheMB, 1024},
		{"repo watch", c.RepoWatch, config.WatchAuto},
		{"repo poll", c.RepoPoll, 2 * time.Second},
		{"log level", c.LogLevel, slog.LevelInfo},
		{"metrics", c.Metrics, false},
		{"tasks table", c.Tables.Tasks, "toolshed-tasks"},
	}
	for _, ck := range checks {
		if !reflect.DeepEqual(ck.got, ck.want) {
			t.Errorf("%s: %v, want %v", ck.name, ck.got, ck.want)
		}
	}
	if c, _ := from(map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001"}); !c.Metrics {
		t.Error("metrics are off in Lambda by default")
	}
	if c, _ := from(map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001", "TOOLSHED_METRICS": "false"}); c.Metrics {
		t.Error("TOOLSHED_METRICS=false left metrics on in Lambda")
	}
}

// TestDeclarations checks that every process-wide setting is declared
// once, with a default its own parser accepts.
func TestDeclarations(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range config.Settings {
		if seen[s.Name()] {
			t.Errorf("%s is declared twice", s.Name())
		}
		seen[s.Name()] = true
		if err := s.Check(""); err != nil {
			t.Errorf("%s: the default is refused: %v", s.Name(), err)
		}
	}
	for table, s := range config.TableSettings {
		if !seen[s.Name()] {
			t.Errorf("the %s table's setting %s is not in Settings", table, s.Name())
		}
	}
}

func TestInLambda(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "f"}, false},
		{map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001"}, true},
	}
	for _, tt := range tests {
		if got := config.InLambda(func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("InLambda(%v) = %v, want %v", tt.env, got, tt.want)
		}
	}
}

func TestRefused(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"TOOLSHED_STORE": "sqlite"}, "use bolt or dynamodb"},
		{map[string]string{"TOOLSHED_AUTH": "maybe"}, "use auto, keys or off"},
		{map[string]string{"TOOLSHED_RATE_LIMITS": "hello=0"}, "tool=positive-number"},
		{map[string]string{"TOOLSHED_TOOL_FUNCTIONS": "{"}, "TOOLSHED_TOOL_FUNCTIONS"},
		{map[string]string{"TOOLSHED_LOG_LEVEL": "loud"}, "TOOLSHED_LOG_LEVEL"},
		{map[string]string{"TOOLSHED_STORE": "sqlite", "TOOLSHED_AUTH": "maybe"}, `TOOLSHED_STORE="sqlite": use bolt or dynamodb
TOOLSHED_AUTH="maybe": use auto, keys or off`},
		{map[string]string{"TOOLSHED_METRICS": "sometimes"}, "TOOLSHED_METRICS"},
		{map[string]string{"TOOLSHED_REPO_REFRESH": "-1s"}, "positive duration"},
		{map[string]string{"TOOLSHED_REPO_MAX_MB": "0"}, "TOOLSHED_REPO_MAX_MB"},
		{map[string]string{"TOOLSHED_REPO_WATCH": "inotify"}, "use auto"},
		{map[string]string{"TOOLSHED_REPO_POLL": "10ms"}, "at least 100ms"},
		{map[string]string{"TOOLSHED_LOCAL_TENANT": "a+b"}, "TOOLSHED_LOCAL_TENANT"},
		{map[string]string{"TOOLSHED_OAUTH_ISSUER": "http://idp.example"}, "use https"},
		{map[string]string{"TOOLSHED_OAUTH_ISSUER": "https://idp.example?x=1"}, "without user, query or fragment"},
		{map[string]string{"TOOLSHED_OAUTH_ISSUER": "idp.example"}, "use https"},
		{map[string]string{"TOOLSHED_PUBLIC_URL": "https://tools.example/api"}, "origin only"},
		{map[string]string{"TOOLSHED_PUBLIC_URL": "http://tools.example"}, "use https"},
		{map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001", "TOOLSHED_OAUTH_ISSUER": "https://idp.example"}, "TOOLSHED_PUBLIC_URL is required"},
		{map[string]string{"TOOLSHED_OAUTH_ISSUER": "https://idp.example", "TOOLSHED_AUTH": "off"}, "contradicts"},
		{map[string]string{"TOOLSHED_OAUTH_ISSUER": "https://idp.example", "TOOLSHED_OAUTH_READ_SCOPE": "toolshed:full"}, "name two scopes"},
		{map[string]string{"TOOLSHED_OAUTH_ISSUER": "https://idp.example", "TOOLSHED_OAUTH_FULL_SCOPE": `a"b`}, "no spaces, quotes"},
		{map[string]string{"TOOLSHED_OAUTH_ISSUER": "https://idp.example", "TOOLSHED_OAUTH_AUDIENCE": "client_id"}, "use aud or scope"},
	}
	for _, tt := range tests {
		if _, err := from(tt.env); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want one saying %q", tt.env, err, tt.want)
		}
	}
}

func TestLists(t *testing.T) {
	c, err := from(map[string]string{
		"TOOLSHED_RATE_LIMITS":     " hello=600, add_task=120 ,",
		"TOOLSHED_ALLOWED_ORIGINS": "https://a.example, ,https://b.example",
		"TOOLSHED_REPO_DENY":       "*.sqlite,private/",
		"TOOLSHED_REPO_DIR":        "api=/src/api, /src/web",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.RateLimits["hello"] != 600 || c.RateLimits["add_task"] != 120 || len(c.RateLimits) != 2 {
		t.Errorf("rate limits %v", c.RateLimits)
	}
	if strings.Join(c.Origins, " ") != "https://a.example https://b.example" {
		t.Errorf("origins %q", c.Origins)
	}
	if strings.Join(c.RepoDeny, " ") != "*.sqlite private/" {
		t.Errorf("repo deny %q", c.RepoDeny)
	}
	if strings.Join(c.Repos, " ") != "api=/src/api /src/web" {
		t.Errorf("repos %q", c.Repos)
	}
}

func TestOAuth(t *testing.T) {
	c, err := from(map[string]string{"TOOLSHED_OAUTH_ISSUER": "https://idp.example/pool", "TOOLSHED_PUBLIC_URL": "https://tools.example/"})
	if err != nil {
		t.Fatal(err)
	}
	want := config.OAuth{Issuer: "https://idp.example/pool", TenantClaim: "sub", ReadScope: "toolshed:read", FullScope: "toolshed:full", Audience: "aud"}
	if c.OAuth != want || !c.OAuth.On() || c.PublicURL != "https://tools.example" {
		t.Errorf("got %+v, public URL %q; want %+v, https://tools.example", c.OAuth, c.PublicURL, want)
	}
	if c, _ := from(nil); c.OAuth.On() {
		t.Error("OAuth is on without an issuer")
	}
	local, err := from(map[string]string{"TOOLSHED_OAUTH_ISSUER": "http://127.0.0.1:9000", "TOOLSHED_PUBLIC_URL": "http://localhost:8000"})
	if err != nil || local.PublicURL != "http://localhost:8000" {
		t.Errorf("loopback issuer and public URL: %v, %q", err, local.PublicURL)
	}
}
