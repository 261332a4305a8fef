package toolset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/ratelimit"
	"github.com/toolshed/toolshed/shared/store/boltstore"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/toolkit"
	"github.com/toolshed/toolshed/shared/toolset"
	"github.com/toolshed/toolshed/shared/wiring"
)

// exampleRepo is the repository the examples read (the repository tools'
// local directory): a small TypeScript project with the seeds' files.
const exampleRepo = "testdata/example-repo"

// TestContractExamplesRun runs every example of every implemented tool
// through the real pipeline, each in a fresh store and data directory and
// over exampleRepo: the declared error code must come back, or a result
// that contains the declared output (the pipeline has already checked it
// against the outputSchema). Examples that reach the internet must fail
// with UPSTREAM_ERROR where it cannot be reached.
func TestContractExamplesRun(t *testing.T) {
	online := tooltest.InternetReachable()
	newPipeline := func(t *testing.T, repoDir string) *toolkit.Pipeline {
		dir := t.TempDir()
		db, err := boltstore.Open(filepath.Join(dir, "t.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		st := db.Stores()
		env := wiring.NewEnv(config.Config{DataDir: dir, Repos: []string{repoDir}}, nil).UseStores(st, nil)
		t.Cleanup(func() { env.Close() })
		tools, err := family.Build(context.Background(), toolset.Families, env)
		if err != nil {
			t.Fatal(err)
		}
		p, err := wiring.Pipeline(tools, wiring.PipelineOptions{
			Limiter: ratelimit.New(st.Counters, nil),
			Log:     slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	served := newPipeline(t, exampleRepo).Served()
	if len(served) == 0 {
		t.Fatal("no tools served")
	}
	for _, c := range served {
		for _, ex := range c.Examples {
			t.Run(c.Name+"/"+ex.Name, func(t *testing.T) {
				repoDir := exampleRepo
				switch {
				case ex.EmptyRepository:
					repoDir = t.TempDir()
				case ex.HistoryRepository:
					repoDir = repotest.GitHistory(t)
				}
				p := newPipeline(t, repoDir)
				ctx := context.Background()
				var results []json.RawMessage
				for i, s := range ex.Setup {
					out := p.Invoke(ctx, toolkit.Request{Tool: s.Tool, Args: s.Args, Tenant: "examples", RequestID: fmt.Sprint("setup-", i)})
					if !out.OK {
						t.Fatalf("setup %d (%s) failed: %+v", i, s.Tool, out.Error)
					}
					results = append(results, out.Result)
				}
				// In a fresh store, what bind takes from the setup is what
				// the input says.
				input, err := ex.BoundInput(results)
				var got, want any
				json.Unmarshal(input, &got)
				json.Unmarshal(ex.Input, &want)
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Fatalf("bound input %s (%v), want the example's %s", input, err, ex.Input)
				}
				out := p.Invoke(ctx, toolkit.Request{Tool: c.Name, Args: ex.Input, Tenant: "examples", RequestID: "example"})
				if ex.Internet && !online {
					if out.OK || out.Error.Code != toolerr.UpstreamError {
						t.Fatalf("offline, input %s: want UPSTREAM_ERROR, got %s %+v", ex.Input, out.Result, out.Error)
					}
					return
				}
				if ex.Error != "" {
					if out.OK || out.Error.Code != ex.Error {
						t.Fatalf("input %s: want %s, got %s %+v", ex.Input, ex.Error, out.Result, out.Error)
					}
					return
				}
				if !out.OK {
					t.Fatalf("input %s failed: %+v", ex.Input, out.Error)
				}
				if ex.Output != nil {
					var want, got any
					json.Unmarshal(ex.Output, &want)
					json.Unmarshal(out.Result, &got)
					if path, ok := tooltest.Contains(got, want, "result"); !ok {
						t.Errorf("result %s does not contain the example output %s (at %s)", out.Result, ex.Output, path)
					}
				}
			})
		}
	}
}
