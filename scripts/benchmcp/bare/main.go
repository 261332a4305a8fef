// Command bare is the baseline `make bench-mcp` measures Toolshed against:
// a plain go-sdk server, stateless with JSON responses like Toolshed's
// /mcp, serving the same hello tool and nothing else (no validation beyond
// the SDK's own, no rate limit, no logging). It prints "listening <addr>"
// once it accepts connections.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type helloIn struct {
	Name string `json:"name" jsonschema:"Name to greet"`
}

type helloOut struct {
	Greeting string `json:"greeting"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	srv := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "hello", Description: "Greets a name."},
		func(_ context.Context, _ *mcp.CallToolRequest, in helloIn) (*mcp.CallToolResult, helloOut, error) {
			return nil, helloOut{Greeting: "Hello, " + strings.TrimSpace(in.Name) + "!"}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("listening", ln.Addr())
	log.Fatal(http.Serve(ln, h))
}
