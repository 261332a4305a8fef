package deploytest

import "testing"

// TestMCPAnswer: a tools/call answer is read as JSON or as the event that
// carries it; a tool's failure gives its code, a JSON-RPC error its message.
func TestMCPAnswer(t *testing.T) {
	tests := []struct {
		name, body, code, result string
	}{
		{"answer", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{}"}],"structuredContent":{"path":"a.go"}}}`,
			"", `{"path":"a.go"}`},
		{"event", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"structuredContent\":{\"n\":1}}}\n\n",
			"", `{"n":1}`},
		{"tool failure", `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"{\"error\":\"no such file\",\"code\":\"RESOURCE_NOT_FOUND\"}"}]}}`,
			"RESOURCE_NOT_FOUND", ""},
		{"failure without a code", `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[]}}`,
			"isError without a code", ""},
		{"JSON-RPC error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool"}}`,
			"JSON-RPC error: unknown tool", ""},
		{"not JSON", `<html>`, "not JSON-RPC: <html>", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mcpAnswer([]byte(tt.body))
			if a.Code != tt.code || string(a.Result) != tt.result {
				t.Errorf("got %q %s, want %q %s", a.Code, a.Result, tt.code, tt.result)
			}
		})
	}
}
