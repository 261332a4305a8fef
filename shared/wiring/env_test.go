package wiring_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/wiring"
)

// TestCloseOrder: what the process hands over with UseStores is released
// after the work registered since (a family saving its index, say).
func TestCloseOrder(t *testing.T) {
	var order []string
	env := wiring.NewEnv(config.Config{}, nil)
	env.UseStores(store.Stores{}, func() error { order = append(order, "stores"); return nil })
	env.OnClose(func() error { order = append(order, "family"); return nil })
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"family", "stores"}; !slices.Equal(order, want) {
		t.Errorf("closed %v, want %v", order, want)
	}
}

// TestStoresWithoutDynamoDB: the embedded store is the process's to open;
// an Env asked for it says so instead of opening anything.
func TestStoresWithoutDynamoDB(t *testing.T) {
	_, err := wiring.NewEnv(config.Config{Store: "bolt", DataDir: t.TempDir()}, nil).Stores(context.Background())
	if err == nil || !strings.Contains(err.Error(), "boltstore.OpenIn") {
		t.Errorf("error %v, want one saying who opens the embedded store", err)
	}
}

func TestStatus(t *testing.T) {
	env := wiring.NewEnv(config.Config{}, nil)
	n := 0
	env.ReportStatus("calls", func(repos []string) any { n++; return fmt.Sprint(n, repos) })
	if got := env.Status(nil)["calls"]; got != "1 []" {
		t.Errorf("status %v, want 1", got)
	}
	if got := env.Status([]string{"api"})["calls"]; got != "2 [api]" {
		t.Errorf("status %v, want 2 for api: it is asked again each time, for the caller's repositories", got)
	}
}

// TestWarmDefaultRepo: a deployed function with a default repository
// warms it beside its init, and WaitWarm waits for that at most as long
// as it is told, then stops it: once WaitWarm returns no warm-up runs
// (Lambda would freeze it between invocations; the first calls go on
// with it). Without snapshots in a bucket or a default repository
// nothing runs.
func TestWarmDefaultRepo(t *testing.T) {
	tests := []struct {
		name string
		cfg  config.Config
		want string // the repository warmed, "" for none
	}{
		{"deployed, default repository", config.Config{Bucket: "b", DefaultRepo: "shared"}, "shared"},
		{"deployed, none", config.Config{Bucket: "b"}, ""},
		{"local", config.Config{DefaultRepo: "shared"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := wiring.NewEnv(tt.cfg, nil)
			warmed := make(chan string, 1)
			env.WarmDefaultRepo("test", func(_ context.Context, r reposcope.Ref) error { warmed <- r.Key(); return nil })
			if !env.WaitWarm(time.Second) {
				t.Fatal("a quick warm-up was not waited for")
			}
			got := ""
			select {
			case got = <-warmed:
			default:
			}
			if got != tt.want {
				t.Errorf("warmed %q, want %q", got, tt.want)
			}
		})
	}
	env := wiring.NewEnv(config.Config{Bucket: "b", DefaultRepo: "shared"}, nil)
	var stopped atomic.Bool
	env.WarmDefaultRepo("slow", func(ctx context.Context, _ reposcope.Ref) error {
		<-ctx.Done()
		time.Sleep(10 * time.Millisecond) // stopping takes a moment
		stopped.Store(true)
		return ctx.Err()
	})
	start := time.Now()
	if env.WaitWarm(50*time.Millisecond) || time.Since(start) > time.Second {
		t.Errorf("a slow warm-up held WaitWarm %v", time.Since(start))
	}
	if !stopped.Load() {
		t.Error("the slow warm-up still ran when WaitWarm returned")
	}
}

// TestCodeIndexes: the wiring chooses where context_search's indexes live
// and who keeps them, from the bucket and the data directory.
func TestCodeIndexes(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name        string
		cfg         config.Config
		mode        wiring.CodeIndexMode
		blobs       string // the Blobs' type
		defaultRepo string
		tenant      string
	}{
		{"bucket", config.Config{Bucket: "b", DefaultRepo: "acme", LocalTenant: "local", DataDir: dir},
			wiring.CodeIndexStored, "*indexfile.S3Blobs", "acme", ""},
		{"data directory", config.Config{LocalTenant: "local", DataDir: dir, DefaultRepo: "acme"},
			wiring.CodeIndexLive, "*indexfile.DirBlobs", "", "local"},
		{"no data directory", config.Config{LocalTenant: "local"},
			wiring.CodeIndexLive, "*indexfile.MemBlobs", "", "local"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := wiring.NewEnv(tt.cfg, nil)
			defer env.Close()
			got, err := env.CodeIndexes(context.Background(), "index")
			if err != nil {
				t.Fatal(err)
			}
			if blobs := fmt.Sprintf("%T", got.Blobs); got.Mode != tt.mode || blobs != tt.blobs || got.DefaultRepo != tt.defaultRepo || got.Tenant != tt.tenant {
				t.Errorf("got %s, %s, default repo %q, tenant %q; want %s, %s, %q, %q",
					got.Mode, blobs, got.DefaultRepo, got.Tenant, tt.mode, tt.blobs, tt.defaultRepo, tt.tenant)
			}
			if d, ok := got.Blobs.(*indexfile.DirBlobs); ok && d.Root != filepath.Join(dir, "index") {
				t.Errorf("index folder %s, want %s", d.Root, filepath.Join(dir, "index"))
			}
		})
	}
}

// TestServes: a tool function serves the tools TOOLSHED_TOOL names (one,
// or all of a family deployed as one function), the local server every
// tool.
func TestServes(t *testing.T) {
	tests := []struct {
		value string // TOOLSHED_TOOL
		tool  string
		want  bool
	}{
		{"", "blame", true},
		{"hello", "hello", true},
		{"hello", "blame", false},
		{"list_commits,blame,list_refs", "blame", true},
		{"list_commits,blame,list_refs", "get_commit", false},
	}
	for _, tt := range tests {
		vars := map[string]string{config.Tool.Name(): tt.value}
		cfg, err := config.FromEnv(func(k string) string { return vars[k] })
		if err != nil {
			t.Fatal(err)
		}
		if got := wiring.NewEnv(cfg, nil).Serves(tt.tool); got != tt.want {
			t.Errorf("%s=%q: Serves(%s) = %v, want %v", config.Tool.Name(), tt.value, tt.tool, got, tt.want)
		}
	}
}
