package deploytest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/auth"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
)

// AgentAPI is the path a remote agent's calls take to the tools: an HTTP
// API whose /mcp route has the deployed authorizer (its answers cached for
// auth.AuthorizerCacheTTL) in front of the gateway function, which invokes
// each tool's function by name through the Invoke API. The tool functions
// are whatever the Stack last started under ToolFunctionName(tool), so a
// benchmark can start a fresh (cold) one and call it through the same API.
// The gateway and the authorizer run at their memory's CPU share, as every
// function does on Lambda.
type AgentAPI struct {
	api        *lambdatest.HTTPAPI
	stack      *Stack
	Gateway    *lambdatest.Function
	Authorizer *lambdatest.Function

	mu   sync.Mutex
	keys map[string]string // API keys by tenant
}

// AgentAPI starts the authorizer, the gateway (routing tools to their
// functions) and an HTTP API with the /mcp route, as deployed. They stop
// when tb ends.
func (s *Stack) AgentAPI(tb testing.TB, tools []string) *AgentAPI {
	tb.Helper()
	acfg := s.AuthorizerConfig()
	acfg.VCPU = lambdatest.VCPUOf(acfg.MemoryMB)
	authorizer := s.Start(tb, acfg)
	functions := map[string]string{}
	for _, tool := range tools {
		functions[tool] = ToolFunctionName(tool)
	}
	gcfg := s.GatewayConfig(tb, functions)
	gcfg.VCPU = lambdatest.VCPUOf(gcfg.MemoryMB)
	gateway := s.Start(tb, gcfg)
	cached := &lambdatest.Authorizer{Function: authorizer, CacheTTL: auth.AuthorizerCacheTTL}
	var routes []lambdatest.Route
	for _, method := range []string{"POST", "GET", "DELETE"} {
		routes = append(routes, lambdatest.Route{Method: method, Path: "/mcp", Function: gateway, Authorizer: cached})
	}
	api, err := lambdatest.NewHTTPAPI(routes)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(api.Close)
	return &AgentAPI{api: api, stack: s, Gateway: gateway, Authorizer: authorizer, keys: map[string]string{}}
}

// Answer is what a tools/call through the AgentAPI answered.
type Answer struct {
	// Code is the error code when the tool failed ("" when it answered),
	// or what went wrong on the way (an HTTP status, a JSON-RPC error).
	Code string
	// Result is the tool's structured result when it answered.
	Result json.RawMessage
}

// Call makes one MCP tools/call of tool with args (a JSON object) as
// tenant's agent does, and returns the answer and how long the agent
// waited for it.
func (a *AgentAPI) Call(tb testing.TB, tool, args, tenant string) (Answer, time.Duration) {
	tb.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tool, args)
	req, _ := http.NewRequest("POST", a.api.URL()+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+a.key(tb, tenant))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		tb.Fatalf("%s: %v", tool, err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err != nil {
		tb.Fatalf("%s: %v", tool, err)
	}
	if resp.StatusCode != http.StatusOK {
		return Answer{Code: fmt.Sprintf("HTTP %d %.200s", resp.StatusCode, got)}, took
	}
	return mcpAnswer(got), took
}

// key is tenant's API key, created on first use.
func (a *AgentAPI) key(tb testing.TB, tenant string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if k, ok := a.keys[tenant]; ok {
		return k
	}
	k, _, err := auth.Create(context.Background(), a.stack.Stores.APIKeys, tenant, "agent", time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	a.keys[tenant] = k
	return k
}

// mcpAnswer reads a tools/call answer: JSON, or one server-sent event
// carrying it.
func mcpAnswer(body []byte) Answer {
	if i := bytes.Index(body, []byte("data: ")); i >= 0 && !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		body = body[i+len("data: "):]
	}
	var rpc struct {
		Error  *struct{ Message string }
		Result struct {
			IsError           bool
			StructuredContent json.RawMessage
			Content           []struct{ Text string }
		}
	}
	if err := json.Unmarshal(body, &rpc); err != nil {
		return Answer{Code: fmt.Sprintf("not JSON-RPC: %.200s", body)}
	}
	if rpc.Error != nil {
		return Answer{Code: "JSON-RPC error: " + rpc.Error.Message}
	}
	if rpc.Result.IsError {
		var e struct{ Code string }
		if len(rpc.Result.Content) > 0 {
			json.Unmarshal([]byte(rpc.Result.Content[0].Text), &e) //nolint:errcheck // a missing code is reported below
		}
		if e.Code == "" {
			e.Code = "isError without a code"
		}
		return Answer{Code: e.Code}
	}
	return Answer{Result: rpc.Result.StructuredContent}
}
