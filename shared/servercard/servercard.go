// Package servercard describes Toolshed to clients before they connect: the
// MCP Server Card of the experimental server-card extension (SEP-2127), a
// static JSON document served at the extension's default location, the
// Streamable HTTP endpoint's URL followed by /server-card (Path), naming
// the server and the endpoint to connect to; and the identity the
// committed server.json (the MCP Registry's description of the remote
// endpoint and the local binary) shares with it, which a test keeps equal.
//
// A card describes connectivity, not capability: tools, resources and
// prompts stay behind the runtime lists. It is public, so it carries no
// credentials: the Authorization header is described, never given.
package servercard

import "strings"

// The server's identity, shared with server.json.
const (
	// Name is the server's reverse-DNS name (its GitHub namespace).
	Name = "io.github.toolshed/toolshed"
	// Title is its display name.
	Title = "Toolshed"
	// Description says what it serves, in at most 100 characters.
	Description = "Repository, memory, task and web tools for agents, with files and memory as resources"
	// RepositoryURL is where its source is.
	RepositoryURL = "https://github.com/toolshed/toolshed"
)

// Path is where a server answers its card, below its MCP endpoint:
// <endpoint>/server-card.
const Path = "/mcp/server-card"

// MediaType is the card's Content-Type.
const MediaType = "application/mcp-server-card+json"

// SchemaURL is the JSON Schema the card conforms to.
const SchemaURL = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"

// Card is a Server Card.
type Card struct {
	Schema      string     `json:"$schema"`
	Name        string     `json:"name"`
	Version     string     `json:"version"`
	Title       string     `json:"title"`
	Description string     `json:"description"`
	Repository  Repository `json:"repository"`
	Icons       []Icon     `json:"icons,omitempty"`
	Remotes     []Remote   `json:"remotes"`
}

// Icon is an icon of the server, as MCP's Implementation.icons has it.
type Icon struct {
	Source   string   `json:"src"`
	MIMEType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
}

// Repository is where the server's source is.
type Repository struct {
	URL    string `json:"url"`
	Source string `json:"source"`
}

// Remote is an endpoint to connect to.
type Remote struct {
	Type                      string   `json:"type"`
	URL                       string   `json:"url"`
	Headers                   []Header `json:"headers,omitempty"`
	SupportedProtocolVersions []string `json:"supportedProtocolVersions,omitempty"`
}

// Header is an HTTP header a client may need to send.
type Header struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	IsRequired  bool   `json:"isRequired"`
	IsSecret    bool   `json:"isSecret"`
}

// Authorization is the credential header every endpoint takes.
var Authorization = Header{
	Name: "Authorization",
	Description: "Bearer <API key (tsk_...) or OAuth access token>; a server with an OAuth issuer answers 401 with " +
		"its metadata so that clients sign in by themselves, and a loopback server without keys needs none",
	IsSecret: true,
}

// New returns the card of a server of version (a leading "v" dropped, as
// semantic versions are written) whose MCP endpoint is mcpURL and that
// speaks protocolVersions.
func New(version, mcpURL string, protocolVersions []string, icons []Icon) Card {
	return Card{
		Schema:      SchemaURL,
		Name:        Name,
		Version:     strings.TrimPrefix(version, "v"),
		Title:       Title,
		Description: Description,
		Repository:  Repository{URL: RepositoryURL, Source: "github"},
		Icons:       icons,
		Remotes: []Remote{{
			Type:                      "streamable-http",
			URL:                       mcpURL,
			Headers:                   []Header{Authorization},
			SupportedProtocolVersions: protocolVersions,
		}},
	}
}
