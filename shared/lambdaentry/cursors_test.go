package lambdaentry_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/testenv/repotest"
)

// TestCursorsAcrossInstances: a cursor one instance of a tool's function
// issued pages on in a second instance, started cold afterwards (every
// function of a deployment reads the same key), for a tool over DynamoDB
// (list_tasks) and one over a snapshot in S3 (list_files).
func TestCursorsAcrossInstances(t *testing.T) {
	d := newDeployment(t)
	d.S3(t)
	(&repotest.S3{Moto: d.Moto, Bucket: d.Bucket}).Publish(t, "acme", "c1", repotest.WriteDir(t, map[string]string{
		"a.go": "package a\n", "b.go": "package a\n", "c.go": "package a\n",
	}))
	for _, title := range []string{"one", "two", "three"} {
		if _, err := d.Stores.Tasks.Create(context.Background(), "acme", store.NewTask{Title: title}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ tool, args, second string }{
		{"list_tasks", `{"limit":1}`, `"title":"two"`},
		{"list_files", `{"limit":1}`, `"path":"b.go"`},
	} {
		t.Run(c.tool, func(t *testing.T) {
			var cursor string
			for i, instance := range []string{"-a", "-b"} {
				cfg := d.ToolConfig(t, c.tool)
				cfg.Name += instance
				fn := d.Start(t, cfg)
				args := c.args
				if i == 1 {
					args = strings.TrimSuffix(args, "}") + `,"cursor":"` + cursor + `"}`
				}
				resp := invoke(t, fn, directEvent(c.tool, args, "acme", "req"+instance))
				var out struct {
					OK     bool `json:"ok"`
					Result struct {
						NextCursor *string `json:"next_cursor"`
					} `json:"result"`
				}
				if err := json.Unmarshal(resp.Payload, &out); err != nil || !out.OK || out.Result.NextCursor == nil {
					t.Fatalf("instance %s: %s", instance, resp.Payload)
				}
				if i == 1 && !strings.Contains(string(resp.Payload), c.second) {
					t.Errorf("the second instance, with the first one's cursor: %s; want the second page (%s)", resp.Payload, c.second)
				}
				cursor = *out.Result.NextCursor
			}
		})
	}
}
