// Package caller carries who is calling (tenant) and the request id through a
// context, from the HTTP edge (auth middleware, API Gateway authorizer
// context) to the tool pipeline and the MCP handlers.
package caller

import (
	"context"
	"crypto/rand"
	"encoding/hex"
)

// Identity is the authenticated caller of one request.
type Identity struct {
	Tenant    string
	RequestID string
}

type key struct{}

// With returns ctx carrying id.
func With(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, key{}, id)
}

// From returns the identity in ctx (zero if none).
func From(ctx context.Context) Identity {
	id, _ := ctx.Value(key{}).(Identity)
	return id
}

// NewRequestID returns a random 16-byte hex id.
func NewRequestID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
