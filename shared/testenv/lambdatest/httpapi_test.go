package lambdatest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHTTPAPIAnswersOfItsOwn: what API Gateway answers without a function's
// answer — no route, no identity, a refusing authorizer, a function that
// does not answer in the proxy format — comes as it does from API Gateway.
func TestHTTPAPIAnswersOfItsOwn(t *testing.T) {
	echo := startEcho(t, Config{})
	api, err := NewHTTPAPI([]Route{
		{Method: "POST", Path: "/open", Function: echo},
		{Method: "POST", Path: "/guarded", Function: echo, Authorizer: &Authorizer{Function: echo}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)
	tests := []struct {
		name, method, path, auth string
		status                   int
		message                  string
	}{
		{"no route", "POST", "/nowhere", "", 404, "Not Found"},
		{"another method", "GET", "/open", "", 404, "Not Found"},
		{"no identity", "POST", "/guarded", "", 401, "Unauthorized"},
		{"the authorizer refuses", "POST", "/guarded", "Bearer x", 403, "Forbidden"},
		{"not a proxy response", "POST", "/open", "", 500, "Internal Server Error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, api.URL()+tt.path, strings.NewReader(`{}`))
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			var got struct{ Message string }
			if json.Unmarshal(body, &got) != nil || resp.StatusCode != tt.status || got.Message != tt.message {
				t.Errorf("%d %s, want %d {\"message\":%q}", resp.StatusCode, body, tt.status, tt.message)
			}
		})
	}
}

// TestAuthorizerCache: an authorizer's answer serves the later requests
// with the same credential, on any route it guards, for its CacheTTL; a
// new credential, or the TTL's end, calls it again.
func TestAuthorizerCache(t *testing.T) {
	echo := startEcho(t, Config{})
	authorizer := &Authorizer{Function: echo, CacheTTL: 500 * time.Millisecond}
	api, err := NewHTTPAPI([]Route{
		{Method: "POST", Path: "/a", Function: echo, Authorizer: authorizer},
		{Method: "POST", Path: "/b", Function: echo, Authorizer: authorizer},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)
	steps := []struct {
		name, path, credential string
		wait                   time.Duration
		calls                  int // the authorizer's, in all
	}{
		{"first request", "/a", "Bearer one", 0, 1},
		{"same credential", "/a", "Bearer one", 0, 1},
		{"same credential, another route", "/b", "Bearer one", 0, 1},
		{"another credential", "/a", "Bearer two", 0, 2},
		{"after the TTL", "/a", "Bearer one", 600 * time.Millisecond, 3},
	}
	for _, s := range steps {
		time.Sleep(s.wait)
		req, _ := http.NewRequest("POST", api.URL()+s.path, strings.NewReader(`{}`))
		req.Header.Set("Authorization", s.credential)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		// echo refuses (its answer has no isAuthorized): refusals are cached too.
		if got := len(echo.Runtime.Invocations()); resp.StatusCode != http.StatusForbidden || got != s.calls {
			t.Errorf("%s: %d, the authorizer called %d times, want 403 and %d", s.name, resp.StatusCode, got, s.calls)
		}
	}
}
