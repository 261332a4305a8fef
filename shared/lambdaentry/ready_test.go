package lambdaentry_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/testenv/deploytest"
	"github.com/toolshed/toolshed/shared/testenv/lambdatest"
)

// TestSymbolsReadyAfterCalls measures how many calls an agent makes
// before a repository's symbol table is ready, through the agent's path
// (the HTTP API, the authorizer, the gateway), with the function frozen
// between calls and at its CPU share, as on Lambda (nothing builds the
// table but the calls that read it): a first environment after a push
// builds it, a slice per call, and saves it; a second environment reads
// it saved; a third builds (or reads) it in its init, the repository
// being its default one. Every call must answer within its deadline. It
// runs on the tree TestScale measures (TOOLSHED_SCALE_TREE; make
// bench-fanout TREE=...), not in make test:
//
//	TOOLSHED_SCALE_TREE=/work/data/gosrc go test -run TestSymbolsReadyAfterCalls -v ./shared/lambdaentry/
func TestSymbolsReadyAfterCalls(t *testing.T) {
	dir, _ := scaleTree.Get(os.Getenv) // settings.Text takes any value
	if dir == "" {
		t.Skip(scaleTree.Name() + " names no tree to measure")
	}
	d := newDeployment(t)
	d.S3(t)
	p := publishCheckout(t, d, "big", dir)
	t.Logf("published %d files, %d MB", p.Files, p.Bytes>>20)
	api := d.AgentAPI(t, []string{"find_symbols"})
	for _, env := range []struct {
		name, tenant, defaultRepo string
	}{
		{"after a push, the first environment", "big", ""},
		{"a second environment", "big", ""},
		{"an environment whose default repository it is", "newcomer", "big"},
	} {
		cfg := d.ToolConfig(t, "find_symbols")
		cfg.VCPU = lambdatest.VCPUOf(cfg.MemoryMB)
		if env.defaultRepo != "" {
			cfg.Env[config.DefaultRepo.Name()] = env.defaultRepo
		}
		fn := d.Start(t, cfg)
		calls, slowest, last := callsUntilReady(t, api, env.tenant)
		fn.Stop()
		t.Logf("find_symbols (%d MB, %.2f vCPU), %s: ready after %d calls (slowest %v); %s", cfg.MemoryMB, cfg.VCPU, env.name,
			calls, slowest.Round(time.Millisecond), last)
	}
}

// callsUntilReady calls find_symbols through api until its answer says
// the table is ready, and returns how many calls that took, the slowest
// call, and the last answer's index.
func callsUntilReady(t *testing.T, api *deploytest.AgentAPI, tenant string) (int, time.Duration, string) {
	t.Helper()
	var slowest time.Duration
	for i := 1; i <= 100; i++ {
		a, took := api.Call(t, "find_symbols", `{"name":"NewReader"}`, tenant)
		slowest = max(slowest, took)
		var out struct {
			Index json.RawMessage `json:"index"`
		}
		if err := json.Unmarshal(a.Result, &out); a.Code != "" || err != nil {
			t.Fatalf("call %d: %s (%v)", i, a.Code, err)
		}
		if strings.Contains(string(out.Index), `"state":"ready"`) {
			return i, slowest, string(out.Index)
		}
	}
	t.Fatal("find_symbols: not ready after 100 calls")
	return 0, 0, ""
}
