package mcpserver

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/toolshed/toolshed/shared/schema"
)

// FuzzParseMessage: parseMessage never panics, and what it accepts is one
// JSON object with a string method, no keys that differ only in case in it
// or its params and, if any, an id the SDK echoes exactly (a string, or an
// integer within ±maxID).
func FuzzParseMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"hello","arguments":{"name":"x"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}{}`,
		`{"a":{"b":1,"b":2}}`,
		`{"a":"\\"","\u0061":[{"x":{},"y":"}"}]}`,
		`[{"k":1},{"k":2}]`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		"\xff",
		``,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_task","NAME":"hello"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","METHOD":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"x":1,"X":2}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, rej := parseMessage(body)
		if rej != nil {
			if rej.code == 0 || rej.message == "" {
				t.Fatalf("rejection without code or message: %+v", rej)
			}
			return
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(body, &fields); err != nil {
			t.Fatalf("accepted %q, which is not a JSON object: %v", body, err)
		}
		var params map[string]json.RawMessage
		json.Unmarshal(msg.params, &params)
		for _, obj := range []map[string]json.RawMessage{fields, params} {
			if a, b, folded := schema.FoldedKeys(obj); folded {
				t.Fatalf("accepted %q, whose keys %q and %q differ only in case", body, a, b)
			}
		}
		if msg.method == "" {
			t.Fatalf("accepted %q without a method", body)
		}
		if msg.id == nil || msg.id[0] == '"' {
			return
		}
		n, err := strconv.ParseInt(string(msg.id), 10, 64)
		if err != nil || n > maxID || n < -maxID || float64(n) != float64(int64(float64(n))) {
			t.Fatalf("accepted id %s, which the SDK cannot echo exactly", msg.id)
		}
	})
}
