package auth

import "github.com/toolshed/toolshed/shared/toolerr"

// KeyHelp ends the message of every 401 a key check gives, so that a
// person reading it — in a client, or in the server's log line when the
// client shows only "Failed to connect" — learns how to get a key.
//
// With OAuth on, a 401 should also say where to sign in (the authorization
// server named by the protected-resource metadata): that sentence belongs
// here, next to this one, so that every 401 says both.
const KeyHelp = "get an API key from the server's operator, who creates one with " +
	"`go run ./scripts/apikeys create -tenant <tenant> -name <name>` (docs/tenants-and-api-keys.md)"

// unauthorized is a 401 refusal: why, then KeyHelp.
func unauthorized(why string) *toolerr.Error {
	return toolerr.New(toolerr.Unauthorized, "%s; %s", why, KeyHelp)
}
