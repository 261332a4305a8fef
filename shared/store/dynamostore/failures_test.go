package dynamostore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
	"github.com/toolshed/toolshed/shared/testenv/dynamotest"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
)

// TestFailuresSayWhich: each way DynamoDB fails is told apart, on the real
// emulator: a missing table, throttling (through a proxy answering as
// DynamoDB does), a hang (SIGSTOP: a write may or may not have been
// applied, a read changed nothing) and a refusal (nothing listens: nothing
// changed).
func TestFailuresSayWhich(t *testing.T) {
	srv := dynamotest.Start(t)
	tables := srv.NewTables(t)
	proxy := emulator.StartProxy(t, srv.Endpoint)
	stores := dynamostore.New(dynamotest.NewClient(proxy.URL(), func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }), tables)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	write := func(ctx context.Context) error {
		_, err := stores.Tasks.Create(ctx, "acme", store.NewTask{Title: "t"}, now)
		return err
	}
	read := func(ctx context.Context) error {
		_, err := stores.Tasks.List(ctx, "acme", store.TaskQuery{})
		return err
	}
	bounded := func(call func(context.Context) error) error {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		return call(ctx)
	}
	check := func(what string, err error, want []error, not []error, says string) {
		t.Helper()
		for _, w := range want {
			if !errors.Is(err, w) {
				t.Errorf("%s: %v, want %v", what, err, w)
			}
		}
		for _, n := range not {
			if errors.Is(err, n) {
				t.Errorf("%s: %v, must not be %v", what, err, n)
			}
		}
		if !strings.Contains(fmtErr(err), says) {
			t.Errorf("%s: %v does not say %q", what, err, says)
		}
	}

	missing := dynamostore.New(srv.Client(), dynamotest.UniqueTables())
	_, err := missing.Tasks.List(context.Background(), "acme", store.TaskQuery{})
	check("a missing table", err, []error{store.ErrStorage}, []error{store.ErrMaybeDone}, "table does not exist")

	proxy.Throttle(emulator.ThrottleDynamoDB)
	check("throttled", bounded(write), []error{store.ErrStorage, store.ErrThrottled}, []error{store.ErrMaybeDone}, "throttling")
	proxy.Throttle(&emulator.Canned{Status: 400, Header: map[string]string{"Content-Type": "application/x-amz-json-1.0"},
		Body: `{"__type":"com.amazon.coral.service#AccessDeniedException","message":"User is not authorized to perform: dynamodb:PutItem"}`})
	check("access denied", bounded(write), []error{store.ErrStorage}, []error{store.ErrMaybeDone, store.ErrThrottled}, "refused access (check the function's IAM role")
	proxy.Pass()

	if err := srv.Process.Stop(); err != nil {
		t.Fatal(err)
	}
	check("a write to a hung table", bounded(write), []error{store.ErrStorage, store.ErrMaybeDone}, nil, "did not answer")
	check("a read from a hung table", bounded(read), []error{store.ErrStorage}, []error{store.ErrMaybeDone}, "did not answer")
	if err := srv.Process.Continue(); err != nil {
		t.Fatal(err)
	}
	if err := bounded(write); err != nil {
		t.Errorf("a write once resumed: %v", err)
	}

	proxy.Refuse()
	check("a write to a refusing endpoint", bounded(write), []error{store.ErrStorage}, []error{store.ErrMaybeDone}, "cannot be reached")
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
