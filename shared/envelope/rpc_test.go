package envelope_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/envelope"
)

func TestWriteRPCError(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		code       int64
		message    string
		data       map[string]any
		wantStatus int
		wantBody   string
	}{
		{"unauthorized", http.StatusUnauthorized, envelope.RPCInvalidRequest, "missing API key", map[string]any{"code": "UNAUTHORIZED"},
			401, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"missing API key","data":{"code":"UNAUTHORIZED"}}}`},
		{"no data", http.StatusNotFound, -32601, "no route", nil,
			404, `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"no route"}}`},
		{"data JSON cannot encode", http.StatusForbidden, envelope.RPCInvalidRequest, "x", map[string]any{"f": func() {}},
			500, `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			envelope.WriteRPCError(rec, tt.status, nil, tt.code, tt.message, tt.data)
			if rec.Code != tt.wantStatus {
				t.Errorf("status %d, want %d", rec.Code, tt.wantStatus)
			}
			if got := rec.Header().Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type %q", got)
			}
			if got, want := rec.Header().Get("Content-Length"), strconv.Itoa(rec.Body.Len()); got != want {
				t.Errorf("Content-Length %q, want %s (the answer's length is known before it is sent)", got, want)
			}
			if got := strings.TrimSpace(rec.Body.String()); got != tt.wantBody {
				t.Errorf("body\n got %s\nwant %s", got, tt.wantBody)
			}
		})
	}
}
