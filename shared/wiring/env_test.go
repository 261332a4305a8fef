package wiring_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/toolshed/toolshed/shared/config"
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
	env.ReportStatus("calls", func() any { n++; return n })
	if got := env.Status()["calls"]; got != 1 {
		t.Errorf("status %v, want 1", got)
	}
	if got := env.Status()["calls"]; got != 2 {
		t.Errorf("status %v, want 2: it is asked again each time", got)
	}
}
