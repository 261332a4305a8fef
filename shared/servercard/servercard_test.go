package servercard_test

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/servercard"
)

// registryFile is the server.json the MCP Registry publishes.
var registryFile = filepath.Join("..", "..", "scripts", "registry", "server.json")

// TestRegistryFile: server.json names the server as its card does, within
// the registry's limits, with the remote endpoint and the local binary
// both serving /mcp over Streamable HTTP.
func TestRegistryFile(t *testing.T) {
	raw, err := os.ReadFile(registryFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema      string `json:"$schema"`
		Name        string
		Title       string
		Description string
		Version     string
		Repository  servercard.Repository
		Remotes     []struct{ Type, URL string }
		Packages    []struct {
			RegistryType, Identifier, Version string
			Transport                         struct{ Type, URL string }
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", registryFile, err)
	}
	card := servercard.New("v1.2.3", "https://tools.example.com/mcp", nil, nil)
	checks := []struct {
		what string
		ok   bool
	}{
		{"$schema is a dated server.schema.json", strings.HasPrefix(doc.Schema, "https://static.modelcontextprotocol.io/schemas/") && strings.HasSuffix(doc.Schema, "/server.schema.json")},
		{"name, title and description are the card's", doc.Name == card.Name && doc.Title == card.Title && doc.Description == card.Description},
		{"description has 1-100 characters", len(doc.Description) >= 1 && len(doc.Description) <= 100},
		{"repository is the card's", doc.Repository == card.Repository},
		{"version is exact", doc.Version != "" && !strings.ContainsAny(doc.Version, "^~<>*x ")},
		{"one remote: streamable-http at .../mcp", len(doc.Remotes) == 1 && doc.Remotes[0].Type == "streamable-http" && strings.HasSuffix(doc.Remotes[0].URL, "/mcp")},
		{"one package: the Go module, serving http://127.0.0.1:8000/mcp", len(doc.Packages) == 1 && doc.Packages[0].RegistryType == "go" &&
			doc.Packages[0].Identifier == "github.com/toolshed/toolshed" && doc.Packages[0].Version == "v"+doc.Version &&
			doc.Packages[0].Transport.Type == "streamable-http" && doc.Packages[0].Transport.URL == "http://127.0.0.1:8000/mcp"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: %s", registryFile, c.what)
		}
	}
}

// TestNew: the card names the endpoint, strips the v of a version, and
// describes the credential without carrying one.
func TestNew(t *testing.T) {
	c := servercard.New("v1.2.3-4-gabc", "https://tools.example.com/mcp", []string{"2026-07-28"}, nil)
	if c.Version != "1.2.3-4-gabc" || c.Schema != servercard.SchemaURL || len(c.Remotes) != 1 {
		t.Fatalf("card %+v", c)
	}
	r := c.Remotes[0]
	if u, err := url.Parse(r.URL); err != nil || u.Path != "/mcp" || r.Type != "streamable-http" || len(r.SupportedProtocolVersions) != 1 {
		t.Errorf("remote %+v", r)
	}
	if len(r.Headers) != 1 || r.Headers[0].Name != "Authorization" || !r.Headers[0].IsSecret || r.Headers[0].IsRequired {
		t.Errorf("headers %+v", r.Headers)
	}
	if len(c.Description) > 100 || len(c.Name) > 200 {
		t.Errorf("name or description too long: %q %q", c.Name, c.Description)
	}
}
