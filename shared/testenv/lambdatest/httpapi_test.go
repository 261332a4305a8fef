package lambdatest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestHTTPAPIAnswersOfItsOwn: what API Gateway answers without a function's
// answer — no route, no identity, a refusing authorizer, a function that
// does not answer in the proxy format — comes as it does from API Gateway.
func TestHTTPAPIAnswersOfItsOwn(t *testing.T) {
	echo := startEcho(t, Config{})
	api, err := NewHTTPAPI([]Route{
		{Method: "POST", Path: "/open", Function: echo},
		{Method: "POST", Path: "/guarded", Function: echo, Authorizer: echo},
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
