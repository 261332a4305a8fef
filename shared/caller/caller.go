// Package caller is who is calling: what a request's credential allows
// (Grant, as the authenticators find it), and the identity, request id,
// arrival time and tool filters carried through a context from the HTTP
// edge (auth middleware, API Gateway authorizer context) to the tool
// pipeline and the MCP handlers.
package caller

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Identity is the authenticated caller of one request.
type Identity struct {
	Tenant    string
	RequestID string
	// Repos limits the caller to some repositories (its API key's, its
	// access token's); nil: every repository of the tenant.
	Repos []string
	// Accepted is when the request arrived: a tool's deadline runs from
	// it, so authentication counts against it too (zero: unknown, the
	// deadline runs from when the tool is invoked).
	Accepted time.Time
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

// ToolFilter decides whether one request may see and call a tool: nil, or
// the error (in the error vocabulary) that a call of it answers.
type ToolFilter func(tool string) error

// Grant is what a request's credential allows: its tenant, for a
// credential that serves only some tools (an OAuth token's scopes) the
// filter of those tools, and for one limited to some repositories (an API
// key's, a token's) their names.
type Grant struct {
	Tenant string
	Tools  ToolFilter // nil: every tool
	Repos  []string   // the repositories the credential is limited to; nil: every one
}

type filterKey struct{}

// WithToolFilter returns ctx in which every tool must also pass f: the
// tools a client selected, the scopes of its token. Filters add up.
func WithToolFilter(ctx context.Context, f ToolFilter) context.Context {
	if prev, ok := ctx.Value(filterKey{}).(ToolFilter); ok {
		inner := f
		f = func(tool string) error {
			if err := prev(tool); err != nil {
				return err
			}
			return inner(tool)
		}
	}
	return context.WithValue(ctx, filterKey{}, f)
}

// CheckTool reports whether the request in ctx may see and call tool: nil
// unless a filter refuses it.
func CheckTool(ctx context.Context, tool string) error {
	if f, ok := ctx.Value(filterKey{}).(ToolFilter); ok {
		return f(tool)
	}
	return nil
}
