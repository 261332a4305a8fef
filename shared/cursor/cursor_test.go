package cursor_test

import (
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/toolerr"
)

func TestRoundTrip(t *testing.T) {
	for _, id := range []int64{1, 2, 63, 1 << 40, 9223372036854775807} {
		c := cursor.EncodeID("t", id)
		got, err := cursor.DecodeID("t", c)
		if err != nil || got != id {
			t.Errorf("DecodeID(EncodeID(%d)) = %d, %v", id, got, err)
		}
		if strings.ContainsAny(c, "=+/") {
			t.Errorf("cursor %q is not unpadded base64url", c)
		}
	}
	any := func(string) bool { return true }
	for _, pos := range []string{"x", "0000000000000000001-00000000000000ff", "a:b:c", "日本"} {
		got, err := cursor.Decode("m", cursor.Encode("m", pos), any)
		if err != nil || got != pos {
			t.Errorf("Decode(Encode(%q)) = %q, %v", pos, got, err)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	valid := cursor.EncodeID("t", 12) // "dDoxMg"
	for _, c := range []string{
		"", "not-a-cursor", "!!!!", valid + "=", valid + "==", valid + "A", strings.ToUpper(valid), " " + valid,
		"dDoxMh",           // "t:12" with non-zero padding bits
		"dDox+w", "dDox/w", // standard base64 alphabet
		cursor.EncodeID("m", 5), // another kind
		cursor.Encode("t", ""), cursor.Encode("t", "0"), cursor.Encode("t", "-5"), cursor.Encode("t", "05"),
		cursor.Encode("t", "+5"), cursor.Encode("t", "5 "), cursor.Encode("t", "9223372036854775808"),
		cursor.Encode("t", "1e3"), cursor.Encode("", "5"), cursor.Encode("tt", "5"), "t:5",
	} {
		_, err := cursor.DecodeID("t", c)
		te, ok := err.(*toolerr.Error)
		if !ok || te.Code != toolerr.InvalidInput || !strings.HasPrefix(te.Message, "cursor: ") {
			t.Errorf("DecodeID(%q) = %v, want INVALID_INPUT naming cursor", c, err)
		}
	}
	if got, err := cursor.DecodeID("t", valid); err != nil || got != 12 {
		t.Fatalf("DecodeID(%q) = %d, %v", valid, got, err)
	}
	if _, err := cursor.Decode("m", cursor.Encode("m", "x"), func(string) bool { return false }); err == nil {
		t.Error("a position the validator refuses was accepted")
	}
}
