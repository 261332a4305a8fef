package schema

import (
	"math"
	"math/big"
	"strconv"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// maxNumberText bounds the text of a number that is not plain digits, so
// exact arithmetic on it stays cheap.
const maxNumberText = 100

// Int is an integer argument. JSON Schema's "integer" accepts any number
// with a zero fractional part (1, 1.0, 1e2), which encoding/json refuses
// for an int64; Int accepts them, exactly, within the int64 range and when
// written in at most 100 characters. Other numbers fail to decode with an
// INVALID_INPUT error.
type Int int64

// UnmarshalJSON implements json.Unmarshaler.
func (n *Int) UnmarshalJSON(b []byte) error {
	s := string(b)
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		*n = Int(v)
		return nil
	}
	if len(s) > maxNumberText {
		return toolerr.Field("arguments", "numbers written with more than %d characters are not accepted", maxNumberText)
	}
	// Other forms: a cheap bound first, then exact arithmetic.
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.Abs(f) > math.MaxInt64 {
		return notInteger(s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return notInteger(s)
	}
	*n = Int(r.Num().Int64())
	return nil
}

func notInteger(s string) error {
	return toolerr.Field("arguments", "%s is not an integer in the int64 range", s)
}
