// Command smoke checks a running Toolshed from the outside: it lists the
// tools over /mcp, calls each tool's first contract example on the three
// routes, checks the envelopes and the output schemas, and prints a
// latency table (see shared/smoke). It exits 1 if any answer is wrong.
//
//	go run ./scripts/smoke -url http://127.0.0.1:8000
//	go run ./scripts/smoke -url https://abc123.execute-api.eu-west-1.amazonaws.com -key $TOOLSHED_KEY
//
// It calls the tools for real: use a key of a tenant kept for it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/toolshed/toolshed/shared/cmdline"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/smoke"
)

var version = "dev"

// keySetting is the API key the smoke test sends unless -key says another.
var keySetting = settings.New("TOOLSHED_KEY", "", "the API key scripts/smoke sends", settings.Text)

func main() {
	url := flag.String("url", "http://127.0.0.1:8000", "the server's base URL (a stack's ApiUrl)")
	envKey, _ := keySetting.Get(os.Getenv) // settings.Text takes any value
	key := flag.String("key", envKey, "API key (env "+keySetting.Name()+"); none for a local server without keys")
	cmdline.Command{Name: "smoke", Version: version, Readme: "docs/deploy.md#smoke-test",
		Summary: "calls every tool's first example on the three routes and checks the answers"}.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	report, err := smoke.Run(ctx, smoke.Options{URL: *url, Key: *key})
	if err != nil {
		fmt.Fprintln(os.Stderr, "smoke:", err)
		os.Exit(1)
	}
	report.WriteTable(os.Stdout)
	if !report.OK() {
		os.Exit(1)
	}
}
