// Package oidctest runs a real OAuth 2.1 authorization server for tests:
// the npm package oidc-provider (installed by `npm ci` at the repo root),
// configured by provider.mjs beside this file, on a free loopback port.
// It offers what an MCP client needs (discovery, dynamic client
// registration, the authorization code flow with PKCE, refresh tokens,
// resource indicators with JWT access tokens), answers login and consent
// at once for one account, and issues client-credentials tokens to one
// static machine client. Start it once per test package:
//
//	as := oidctest.Start(t, oidctest.Options{Account: "alice"})
//	tok := as.ClientCredentials(t, "http://127.0.0.1:8000/mcp", "toolshed:read")
//	as.Rotate(t) // a new signing key
//
// A missing node or oidc-provider fails the test: it is never skipped.
package oidctest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/dynamotest"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
)

// Options configure the server.
type Options struct {
	Account        string        // the account that logs in: the tokens' sub ("alice" when "")
	Scopes         []string      // the resource scopes it grants (toolshed:read and toolshed:full when nil)
	AccessTokenTTL time.Duration // the access tokens' lifetime (whole seconds; 5 s when 0)
}

// Machine is the static client of the client credentials grant.
const (
	MachineID     = "toolshed-machine"
	machineSecret = "toolshed-machine-secret-for-tests"
)

// Server is a running authorization server.
type Server struct {
	Issuer  string // http://127.0.0.1:<port>
	Process *emulator.Process
}

// Start runs the server until the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.Account == "" {
		opts.Account = "alice"
	}
	if opts.Scopes == nil {
		opts.Scopes = []string{"toolshed:read", "toolshed:full"}
	}
	if opts.AccessTokenTTL == 0 {
		opts.AccessTokenTTL = 5 * time.Second
	}
	root, err := dynamotest.RepoRoot()
	if err != nil {
		t.Fatalf("oidctest: %v", err)
	}
	node := emulator.Node(t, "oidctest", root, "oidc-provider")
	script := filepath.Join(root, "shared", "testenv", "oidctest", "provider.mjs")
	proc := emulator.StartProcess(t, "oidc-provider", func(port int) *exec.Cmd {
		arg, _ := json.Marshal(map[string]any{
			"port": port, "account": opts.Account, "scopes": opts.Scopes,
			"accessTokenTTL": int(opts.AccessTokenTTL / time.Second),
			"machine":        map[string]string{"id": MachineID, "secret": machineSecret},
		})
		cmd := exec.Command(node, script, string(arg))
		cmd.Dir = root
		return cmd
	})
	return &Server{Issuer: "http://" + proc.Addr, Process: proc}
}

// Rotate makes a new key the signing key (the old ones stay published)
// and returns its kid.
func (s *Server) Rotate(t testing.TB) string {
	t.Helper()
	var out struct{ Kid string }
	s.post(t, "/rotate", nil, &out)
	return out.Kid
}

// ClientCredentials returns an access token of the machine client for
// resource with scope (space-separated).
func (s *Server) ClientCredentials(t testing.TB, resource, scope string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "resource": {resource}, "scope": {scope}}
	var out struct {
		AccessToken string `json:"access_token"`
	}
	s.post(t, "/token", form, &out)
	return out.AccessToken
}

// Requests returns the requests the server has answered, one
// "AS <method> <path> <status>" line each.
func (s *Server) Requests() []string {
	var out []string
	for _, line := range strings.Split(s.Process.Logs(), "\n") {
		if strings.HasPrefix(line, "AS ") {
			out = append(out, line)
		}
	}
	return out
}

func (s *Server) post(t testing.TB, path string, form url.Values, out any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.Issuer+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(MachineID, machineSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("oidctest: POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("oidctest: POST %s: %s: %s", path, resp.Status, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("oidctest: POST %s: %v: %s", path, err, body)
	}
}
