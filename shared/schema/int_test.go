package schema_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/schema"
	"github.com/toolshed/toolshed/shared/toolerr"
)

func TestInt(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1", 1, true},
		{"-7", -7, true},
		{"0", 0, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"1.0", 1, true},
		{"1e2", 100, true},
		{"0.5e1", 5, true},
		{"-0.0", 0, true},
		{"9007199254740993.0", 9007199254740993, true}, // not exact in a float64
		{"9007199254740990.5", 0, false},
		{"9.223372036854775807e18", 9223372036854775807, true},
		{"9.223372036854775808e18", 0, false},
		{"1e20", 0, false},
		{"1e400", 0, false},
		{"1e-400", 0, false},
		{"1." + strings.Repeat("0", 98), 1, true},
		{"1." + strings.Repeat("0", 99), 0, false}, // over 100 characters
		{"9223372036854775808", 0, false},
		{"1.5", 0, false},
		{"1e-1", 0, false},
		{`"1"`, 0, false},
		{"null", 0, false},
		{"true", 0, false},
	}
	for _, tc := range tests {
		var n schema.Int
		err := json.Unmarshal([]byte(tc.in), &n)
		if tc.ok != (err == nil) || (tc.ok && int64(n) != tc.want) {
			t.Errorf("%s: got %d, %v; want %d ok=%v", tc.in, n, err, tc.want, tc.ok)
		}
		// A failure is INVALID_INPUT, even wrapped as toolkit.Typed wraps it.
		if err != nil && toolerr.From(fmt.Errorf("decode: %w", err)).Code != toolerr.InvalidInput {
			t.Errorf("%s: error %v is not INVALID_INPUT", tc.in, err)
		}
	}
}
