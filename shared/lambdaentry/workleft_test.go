package lambdaentry_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolshed/toolshed/shared/testenv/procstat"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// testWarmCallsLeaveNoWork calls the repository tools' functions, warm,
// with their heaviest input over a large snapshot (repotest.Heavy), and
// checks that once each invocation has answered the function's process
// does no more work for it (procstat.CheckIdle): a warm Lambda environment
// that kept working for an answered call would spend the next calls' CPU.
func testWarmCallsLeaveNoWork(t *testing.T, d *deployment) {
	const tenant = "heavy"
	d.S3(t)
	s3 := repotest.S3{Moto: d.Moto, Bucket: d.Bucket}
	s3.Publish(t, tenant, "c1", repotest.WriteDir(t, repotest.Heavy()))
	calls := []struct{ tool, args string }{
		{"read_file", `{"path":"README.md"}`}, // warms the environment: the snapshot is loaded
		{"read_file", `{"path":"cmd/big.go","includeDeps":true}`},
		{"read_file", `{"path":"web/big.js","includeDeps":true}`},
		{"read_file", `{"path":"py/big.py","includeDeps":true}`},
		{"grep_codebase", `{"pattern":"Serve"}`}, // warms the environment
		{"grep_codebase", `{"pattern":"(?s).*","limit":1}`},
		{"grep_codebase", `{"pattern":".","limit":100}`},
		{"grep_codebase", `{"pattern":"(a|aa)*q"}`},
	}
	for i, c := range calls {
		fn := d.Tool(t, c.tool)
		before, err := procstat.Sample(fn.Pid())
		if err != nil {
			t.Fatal(err)
		}
		resp := invoke(t, fn, directEvent(c.tool, c.args, tenant, fmt.Sprint("heavy-", i)))
		var out struct {
			OK   bool   `json:"ok"`
			Code string `json:"code"`
		}
		json.Unmarshal(resp.Payload, &out)
		how := "ok"
		if !out.OK {
			how = out.Code
		}
		procstat.CheckIdle(t, fn.Pid(), c.tool+" "+c.args, how, before)
	}
}
