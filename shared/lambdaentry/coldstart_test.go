package lambdaentry_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/indexer"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestColdStartsReadTheDefaultRepository: deployed with a default
// repository, the repository tools' functions read it in their init, at
// the init phase's full CPU (wiring.Env.WarmDefaultRepo): grep_codebase
// its searchable files, read_file its snapshot, context_search its code
// index (built by the indexer in parts), so the first call of a tenant
// reading it does none of that.
func TestColdStartsReadTheDefaultRepository(t *testing.T) {
	d := newDeployment(t)
	d.S3(t)
	s3 := &repotest.S3{Moto: d.Moto, Bucket: d.Bucket}
	s3.Publish(t, "shared", "c1", repotest.GoPackages(t, "container/list", "net/url", "strings"))
	ix := &indexer.Indexer{Store: indexfile.NewStore(&indexfile.S3Blobs{Bucket: s3.Objects(), Prefix: indexfile.BucketPrefix}),
		Snapshots: &indexer.Snapshots{Bucket: s3.Objects(), MaxBytes: repo.DefaultMaxBytes}, BatchFiles: 4,
		Now: time.Now, Log: slog.New(slog.DiscardHandler)}
	if err := ix.IndexSnapshot(context.Background(), "shared"); err != nil {
		t.Fatal(err)
	}
	calls := []struct{ tool, args, want string }{
		{"context_search", `{"query":"parse a URL"}`, `"commit":"c1"`},
		{"grep_codebase", `{"pattern":"func Parse\\("}`, `"file":"net/url/url.go"`},
		{"read_file", `{"path":"net/url/url.go"}`, `"path":"net/url/url.go"`},
	}
	for _, c := range calls {
		t.Run(c.tool, func(t *testing.T) {
			cfg := d.ToolConfig(t, c.tool)
			cfg.Env["TOOLSHED_DEFAULT_REPO"] = "shared"
			fn := d.Start(t, cfg)
			if _, err := fn.InitDuration(context.Background()); err != nil {
				t.Fatal(err)
			}
			waitCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if !fn.WaitOutput(waitCtx, `"msg":"warm-up done"`) {
				t.Errorf("%s's init did not read the default repository:\n%s", c.tool, fn.Output())
			}
			resp := invoke(t, fn, directEvent(c.tool, c.args, "newcomer", "cold"))
			var out struct{ OK bool }
			if err := json.Unmarshal(resp.Payload, &out); err != nil || !out.OK || !strings.Contains(string(resp.Payload), c.want) {
				t.Errorf("first call: %s", resp.Payload)
			}
			if c.tool == "context_search" && !strings.Contains(string(resp.Payload), `"state":"ready"`) {
				t.Errorf("context_search's first call did not find its index read: %s", resp.Payload)
			}
		})
	}
}

// TestSymbolTableSavedForTheNextEnvironment: the first navigate function
// to read a snapshot builds its symbol table in its init and saves it in
// the bucket; the next environment reads it instead of parsing, and
// answers the same.
func TestSymbolTableSavedForTheNextEnvironment(t *testing.T) {
	d := newDeployment(t)
	d.S3(t)
	(&repotest.S3{Moto: d.Moto, Bucket: d.Bucket}).Publish(t, "shared", "c1", repotest.GoPackages(t, "container/list", "net/url", "strings"))
	answers := make([]string, 2)
	for i := range answers {
		cfg := d.ToolConfig(t, "find_symbols")
		cfg.Name += []string{"-a", "-b"}[i]
		cfg.Env["TOOLSHED_DEFAULT_REPO"] = "shared"
		fn := d.Start(t, cfg)
		if _, err := fn.InitDuration(context.Background()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		want := []string{`"msg":"symbols: table saved"`, `"parsed":0`}[i]
		if !fn.WaitOutput(ctx, want) {
			t.Fatalf("environment %d: no %s in its output:\n%s", i, want, fn.Output())
		}
		resp := invoke(t, fn, directEvent("find_symbols", `{"name":"Parse"}`, "newcomer", "cold"))
		if !strings.Contains(string(resp.Payload), `"path":"net/url/url.go"`) {
			t.Fatalf("environment %d: %s", i, resp.Payload)
		}
		answers[i] = string(resp.Payload)
	}
	if answers[0] != answers[1] {
		t.Errorf("the stored table answers otherwise:\n%s\n%s", answers[0], answers[1])
	}
}
