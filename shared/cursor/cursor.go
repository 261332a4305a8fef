// Package cursor encodes the opaque paging cursors that list tools return as
// next_cursor and take back as cursor. A cursor is the unpadded base64url
// encoding of "<kind>:<position>": the kind names the listing it belongs to
// (so a cursor of one tool is refused by another) and the position is the
// store's After value. Decoding is strict: only exactly what Encode
// produces is accepted, and anything else is INVALID_INPUT naming "cursor".
package cursor

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/toolshed/toolshed/shared/toolerr"
)

// Field is the argument name cursors travel in.
const Field = "cursor"

var encoding = base64.RawURLEncoding.Strict()

// Encode returns the cursor for position in a listing of kind. kind must
// not contain ':'.
func Encode(kind, position string) string {
	return encoding.EncodeToString([]byte(kind + ":" + position))
}

// Decode returns the position of a cursor that Encode made for kind. valid
// checks the position's form; a position it refuses is malformed too.
func Decode(kind, cursor string, valid func(position string) bool) (string, error) {
	raw, err := encoding.DecodeString(cursor)
	if err != nil {
		return "", malformed()
	}
	position, ok := strings.CutPrefix(string(raw), kind+":")
	if !ok || !valid(position) || Encode(kind, position) != cursor {
		return "", malformed()
	}
	return position, nil
}

// EncodeID returns the cursor for a positive numeric position.
func EncodeID(kind string, id int64) string {
	return Encode(kind, strconv.FormatInt(id, 10))
}

// DecodeID returns the positive numeric position of a cursor made by
// EncodeID for kind.
func DecodeID(kind, cursor string) (int64, error) {
	position, err := Decode(kind, cursor, isID)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(position, 10, 64)
}

// isID reports whether position is a positive integer in canonical form.
func isID(position string) bool {
	id, err := strconv.ParseInt(position, 10, 64)
	return err == nil && id >= 1 && strconv.FormatInt(id, 10) == position
}

func malformed() error {
	return toolerr.Field(Field, "is not a next_cursor returned by this tool; omit it to start from the first page")
}
