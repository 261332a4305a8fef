package localserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/testenv/procstat"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestAnswersLeaveNoWork calls every tool of the local server process with
// heavy input over repotest.Heavy, the client giving up after 20 ms, and checks
// that once each call is answered (or abandoned) the process does no more
// work for it: its CPU time and resident memory stay flat in the window
// after. (It asserts on work left, not on how fast this machine is.)
func TestAnswersLeaveNoWork(t *testing.T) {
	srv := startProcess(t, map[string]string{
		"TOOLSHED_AUTH": "off", "TOOLSHED_LOCAL_TENANT": "acme", "TOOLSHED_DATA_DIR": t.TempDir(),
		"TOOLSHED_REPO_DIR":    repotest.WriteDir(t, repotest.Heavy()),
		"TOOLSHED_RATE_LIMITS": "grep_codebase=100000,read_file=100000,context_search=100000,find_symbols=100000",
	})
	pid := srv.cmd.Process.Pid
	waitIndexed(t, srv)
	waitSymbols(t, srv)
	waitPrecise(t, srv, "the precise indexes made", preciseSettled)
	procstat.WaitIdle(t, pid, time.Minute) // the table is saved after it is ready

	baseline := map[string]any{"cpu": map[string]any{}}
	for i := range 6000 {
		baseline["cpu"].(map[string]any)[fmt.Sprintf("k%05d", i)] = strings.Repeat("v", 20)
	}
	baselineJSON, _ := json.Marshal(baseline)
	words := strings.Fields(strings.Repeat("serve request handler router answer chose documentation line ", 10))
	query, _ := json.Marshal(strings.Join(words, " ")[:500])
	calls := []struct{ tool, args string }{
		{"hello", `{"name":"` + strings.Repeat("n", 100) + `"}`},
		{"sys-audit", `{"command":"list_software"}`},
		{"sys-audit", `{"command":"diff_baseline","baseline":` + string(baselineJSON) + `}`},
		{"read_repo_file", `{"path":"docs/a.md"}`},
		{"read_file", `{"path":"cmd/big.go","includeDeps":true}`},
		{"read_file", `{"path":"web/big.js","includeDeps":true}`},
		{"read_file", `{"path":"py/big.py","includeDeps":true}`},
		{"grep_codebase", `{"pattern":"(?s).*","limit":1}`},
		{"grep_codebase", `{"pattern":".","limit":100}`},
		{"grep_codebase", `{"pattern":"(a|aa)*q"}`},
		{"context_search", `{"query":` + string(query) + `,"limit":20}`},
		{"list_files", `{"patterns":["**"],"limit":1000}`},
		{"find_references", `{"name":"x","limit":500}`},
		{"find_references", `{"name":"Serve","excludeComments":true,"excludeStrings":true}`},
		{"find_symbols", `{"name":"f","match":"substring","limit":500}`},
		{"write_memory_entry", `{"file":"decisions.jsonl","entry":{"timestamp":"2026-01-01T00:00:00Z","decision":"` + strings.Repeat("d", 4000) + `"}}`},
		{"read_memory", `{"file":"decisions.jsonl","limit":100}`},
		{"add_task", `{"title":"` + strings.Repeat("t", 200) + `"}`},
		{"list_tasks", `{"limit":100}`},
		{"update_task", `{"task_id":1,"description":"` + strings.Repeat("u", 1000) + `"}`},
		{"complete_task", `{"task_id":1}`},
		{"delete_task", `{"task_id":1}`},
		{"file-io", `{"command":"write_file","path":"big.txt","content":"` + strings.Repeat("x", 900<<10) + `"}`},
		{"file-io", `{"command":"read_file","path":"big.txt"}`},
		{"web-fetch", `{"url":"https://example.com/"}`},
	}
	for _, c := range calls {
		before, err := procstat.Sample(pid)
		if err != nil {
			t.Fatal(err)
		}
		how := srv.abandon(c.tool, c.args, 20*time.Millisecond)
		procstat.CheckIdle(t, pid, c.tool+" "+c.args[:min(len(c.args), 60)], how, before)
	}
}

// abandon calls a tool on /v1 and gives up on the answer after wait: it
// says what came of the call ("200 ok", "504 TIMEOUT", "abandoned").
func (s *serverProcess) abandon(tool, args string, wait time.Duration) string {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+s.addr+"/v1/tools/"+tool, strings.NewReader(`{"args":`+args+`}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "abandoned"
	}
	defer resp.Body.Close()
	var r reply
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return "abandoned"
	}
	if r.OK {
		return fmt.Sprintf("%d ok", resp.StatusCode)
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, r.Code)
}

// waitSymbols waits until find_symbols' table of the server's repository
// is ready.
func waitSymbols(t *testing.T, srv *serverProcess) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r, err := srv.call("find_symbols", `{"name":"main"}`)
		var out struct {
			Index struct{ State string } `json:"index"`
		}
		if err == nil && r.OK && json.Unmarshal(r.Result, &out) == nil && out.Index.State == "ready" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the symbol table is not ready after 2 minutes: %+v %v", r, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitIndexed waits until context_search's code index of the server's
// repository is ready.
func waitIndexed(t *testing.T, srv *serverProcess) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r, err := srv.call("context_search", `{"query":"serve request"}`)
		var out struct {
			Index struct{ State string } `json:"index"`
		}
		if err == nil && r.OK && json.Unmarshal(r.Result, &out) == nil && out.Index.State == "ready" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the code index is not ready after 2 minutes: %+v %v", r, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
