// Package webfetch implements the web-fetch tool (command fetch_url): an HTTP GET of a public http(s) URL that returns the status,
// headers and text of the response, built so that a caller cannot use it
// to reach anything but the public internet (SSRF).
//
// Every URL, the first and each redirect target, is checked before it is
// requested: http and https only ("Disallowed protocol"), no user name or
// password, ports 80, 443 and 1024-65535, a host on the allowlist when one
// is configured ("Disallowed domain"), and a host that is not an IP address
// other than a public one in any spelling (dotted, decimal, octal, hex,
// short forms, IPv6 forms embedding IPv4, IDNA digits). Then every
// connection is checked where it is made: net.Dialer's Control refuses any
// address that is not public (package netguard) after DNS resolution, so a
// name that resolves, or re-resolves, to a private address never gets a
// connection. Proxies from the environment are ignored; no cookies or
// credentials are sent.
//
// At most MaxRedirects redirects are followed; the body is read up to
// MaxBodyBytes after decompression and refused beyond ("Content size
// exceeds limit of 5 MB."); binary media types are refused; text is decoded
// to UTF-8; a whole fetch takes at most DefaultTimeout.
package webfetch

import (
	"context"
	"fmt"

	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/wiring"
)

// ToolName is the tool's name, as in contracts/web-fetch.json.
const ToolName = "web-fetch"

// Family registers web-fetch. It has no grants: its function touches no
// data of Toolshed's, only its rate counter, which every tool function has.
var Family = family.Family{
	Name:     "web-fetch",
	Tools:    []string{ToolName},
	Settings: family.Every(AllowedDomains, RejectTypes),
	New: func(_ context.Context, env *wiring.Env) ([]toolkit.Tool, error) {
		domains, err := AllowedDomains.Get(env.Getenv)
		if err != nil {
			return nil, err
		}
		types, err := RejectTypes.Get(env.Getenv)
		if err != nil {
			return nil, err
		}
		f, err := New(Options{AllowedDomains: domains, RejectTypes: types})
		if err != nil {
			return nil, err
		}
		return []toolkit.Tool{f.Tool()}, nil
	},
}

// The settings of web-fetch.
var (
	AllowedDomains = settings.New("TOOLSHED_FETCH_ALLOWED_DOMAINS", "",
		"web-fetch allowlist, comma-separated: `example.com` is that host only, `*.example.com` its subdomains (not `example.com` itself); empty allows every public host",
		settings.List)
	RejectTypes = settings.New("TOOLSHED_FETCH_REJECT_TYPES", "",
		"media types web-fetch refuses, `image/*` or `text/csv`, replacing the default list (`application/octet-stream`, `image/*`, `audio/*`, `video/*`, `font/*`, archives); `none` refuses none",
		rejectTypes).Shown("binary types")
)

// rejectTypes parses TOOLSHED_FETCH_REJECT_TYPES: "" is nil (the
// defaults), "none" is no type.
func rejectTypes(s string) ([]string, error) {
	if s == "none" {
		return []string{}, nil
	}
	return settings.List(s)
}

type input struct {
	Command string `json:"command"` // fetch_url, the only command (the schema's enum and default)
	URL     string `json:"url"`
}

// Tool returns the web-fetch tool over f.
func (f *Fetcher) Tool() toolkit.Tool {
	return toolkit.Tool{Name: ToolName, Handler: toolkit.Typed(f.fetchURL)}
}

func (f *Fetcher) fetchURL(ctx context.Context, _ toolkit.Call, in input) (toolkit.Result, error) {
	page, err := f.Fetch(ctx, in.URL)
	if err != nil {
		return toolkit.Result{}, err
	}
	return toolkit.Result{
		Data:    page,
		Message: fmt.Sprintf("Fetched %d bytes from %s", page.Bytes, page.FinalURL),
	}, nil
}
