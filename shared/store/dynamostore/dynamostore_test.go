package dynamostore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
	"github.com/toolshed/toolshed/shared/testenv/dynamotest"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
	"github.com/toolshed/toolshed/shared/testenv/storetest"
)

func TestConformance(t *testing.T) {
	srv := dynamotest.Start(t)
	storetest.Run(t, func(t *testing.T) store.Stores { return srv.Stores(t) })
}

func TestCreateTablesTwice(t *testing.T) {
	srv := dynamotest.Start(t)
	tables := srv.NewTables(t)
	if err := dynamostore.CreateTables(t.Context(), srv.Client(), tables); err != nil {
		t.Fatalf("second CreateTables: %v", err)
	}
}

// storeCalls calls one method of every store; each returns its error.
func storeCalls(stores store.Stores) map[string]func(ctx context.Context) error {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	return map[string]func(ctx context.Context) error{
		"tasks create": func(ctx context.Context) error {
			_, err := stores.Tasks.Create(ctx, "a", store.NewTask{Title: "t"}, now)
			return err
		},
		"tasks create with key": func(ctx context.Context) error {
			_, err := stores.Tasks.Create(ctx, "a", store.NewTask{Title: "t", IdempotencyKey: "k"}, now)
			return err
		},
		"tasks get":  func(ctx context.Context) error { _, err := stores.Tasks.Get(ctx, "a", 1); return err },
		"tasks list": func(ctx context.Context) error { _, err := stores.Tasks.List(ctx, "a", store.TaskQuery{}); return err },
		"tasks update": func(ctx context.Context) error {
			_, err := stores.Tasks.Update(ctx, "a", 1, store.TaskPatch{}, now)
			return err
		},
		"tasks complete": func(ctx context.Context) error { _, err := stores.Tasks.Complete(ctx, "a", 1, now); return err },
		"tasks delete":   func(ctx context.Context) error { _, err := stores.Tasks.Delete(ctx, "a", 1); return err },
		"memory append": func(ctx context.Context) error {
			_, err := stores.Memory.Append(ctx, "a", "f", store.NewEntry{Content: "c"}, now)
			return err
		},
		"memory append with key": func(ctx context.Context) error {
			_, err := stores.Memory.Append(ctx, "a", "f", store.NewEntry{Content: "c", IdempotencyKey: "k"}, now)
			return err
		},
		"memory list": func(ctx context.Context) error {
			_, err := stores.Memory.List(ctx, "a", "f", store.MemoryQuery{})
			return err
		},
		"counter increment": func(ctx context.Context) error {
			_, _, err := stores.Counters.Increment(ctx, "k", 1, now)
			return err
		},
		"access record": func(ctx context.Context) error { _, err := stores.Access.Record(ctx, "a", "p", now); return err },
		"access get":    func(ctx context.Context) error { _, err := stores.Access.Get(ctx, "a", "p"); return err },
		"api keys create": func(ctx context.Context) error {
			return stores.APIKeys.Create(ctx, store.APIKey{Hash: "h", CreatedAt: now})
		},
		"api keys lookup": func(ctx context.Context) error { _, err := stores.APIKeys.Lookup(ctx, "h"); return err },
		"api keys list":   func(ctx context.Context) error { _, err := stores.APIKeys.List(ctx); return err },
		"api keys revoke": func(ctx context.Context) error { _, err := stores.APIKeys.Revoke(ctx, "h", now); return err },
	}
}

func TestBackendFailureIsStorageError(t *testing.T) {
	srv := dynamotest.Start(t)

	// A port nothing listens on.
	port, err := emulator.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	closedEndpoint := fmt.Sprintf("http://127.0.0.1:%d", port)

	cases := []struct {
		name   string
		stores store.Stores
	}{
		{"tables do not exist", dynamostore.New(srv.Client(), dynamotest.UniqueTables())},
		{"endpoint closed", dynamostore.New(dynamotest.NewClient(closedEndpoint, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }), dynamotest.UniqueTables())},
		{"empty table names", dynamostore.New(srv.Client(), dynamostore.Tables{})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for name, call := range storeCalls(tc.stores) {
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				err := call(ctx)
				cancel()
				if !errors.Is(err, store.ErrStorage) {
					t.Errorf("%s: error = %v, want ErrStorage", name, err)
				}
			}
		})
	}
}

func TestCanceledContextIsStorageError(t *testing.T) {
	srv := dynamotest.Start(t)
	stores := srv.Stores(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for name, call := range storeCalls(stores) {
		err := call(ctx)
		if !errors.Is(err, store.ErrStorage) || !errors.Is(err, context.Canceled) {
			t.Errorf("%s: error = %v, want ErrStorage wrapping context.Canceled", name, err)
		}
	}
}

func TestCreateTablesFailure(t *testing.T) {
	client := dynamotest.NewClient("http://127.0.0.1:1", func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := dynamostore.CreateTables(ctx, client, dynamotest.UniqueTables()); err == nil {
		t.Fatal("CreateTables against a closed port succeeded")
	}
}

// TestSchemas: Schemas declares each table of the configuration once, and
// CreateTables makes it with the declared keys.
func TestSchemas(t *testing.T) {
	srv := dynamotest.Start(t)
	tables := srv.NewTables(t)
	if len(dynamostore.Schemas) != len(config.TableSettings) {
		t.Errorf("%d schemas for %d tables", len(dynamostore.Schemas), len(config.TableSettings))
	}
	seen := map[config.Table]bool{}
	for _, s := range dynamostore.Schemas {
		t.Run(string(s.Table), func(t *testing.T) {
			if _, ok := config.TableSettings[s.Table]; !ok || seen[s.Table] {
				t.Fatalf("%s: not a table of the configuration, or declared twice", s.Table)
			}
			seen[s.Table] = true
			out, err := srv.Client().DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String(tables.Name(s.Table))})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal([]any{out.Table.KeySchema, out.Table.AttributeDefinitions})
			want, _ := json.Marshal([]any{s.KeySchema(), s.AttributeDefinitions()})
			if string(got) != string(want) {
				t.Errorf("keys and attributes %s, want %s", got, want)
			}
		})
	}
}
