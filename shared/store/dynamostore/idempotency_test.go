package dynamostore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
	"github.com/toolshed/toolshed/shared/testenv/dynamotest"
)

// The idempotency protocol's cases that only DynamoDB has: a claim whose
// request stopped before recording its write (the conformance suite covers
// the rest on both backends).

var t0 = time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)

// fresh returns stores on new tables, with the tables and a client.
func fresh(t *testing.T, srv *dynamotest.Server) (store.Stores, dynamostore.Tables, *dynamodb.Client) {
	t.Helper()
	tables := srv.NewTables(t)
	client := srv.Client()
	return dynamostore.New(client, tables), tables, client
}

func taskIDs(t *testing.T, tasks store.Tasks, tenant string) []int64 {
	t.Helper()
	page, err := tasks.List(t.Context(), tenant, store.TaskQuery{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	ids := []int64{}
	for _, task := range page.Tasks {
		ids = append(ids, task.ID)
	}
	return ids
}

func wantInProgress(t *testing.T, err error, retryAfter time.Duration) {
	t.Helper()
	var ip *store.InProgressError
	if !errors.As(err, &ip) || !errors.Is(err, store.ErrConflict) {
		t.Fatalf("error = %v, want an InProgressError (ErrConflict)", err)
	}
	if ip.RetryAfter != retryAfter {
		t.Fatalf("RetryAfter = %s, want %s", ip.RetryAfter, retryAfter)
	}
}

func TestPendingTaskClaim(t *testing.T) {
	srv := dynamotest.Start(t)
	newTask := store.NewTask{Title: "t", IdempotencyKey: "k"}

	t.Run("YoungClaimIsInProgress", func(t *testing.T) {
		st, tables, client := fresh(t, srv)
		ctx := t.Context()
		if err := dynamostore.PendTaskClaim(ctx, client, tables, "acme", "k", t0); err != nil {
			t.Fatal(err)
		}
		_, err := st.Tasks.Create(ctx, "acme", newTask, t0.Add(time.Second))
		wantInProgress(t, err, dynamostore.TakeoverDelay-time.Second)
		if ids := taskIDs(t, st.Tasks, "acme"); len(ids) != 0 {
			t.Fatalf("tasks = %v, want none", ids)
		}
		// Another key is not held up.
		other, err := st.Tasks.Create(ctx, "acme", store.NewTask{Title: "o", IdempotencyKey: "other"}, t0.Add(time.Second))
		if err != nil || other.ID != 1 || other.Replayed {
			t.Fatalf("create with another key = %+v, %v", other, err)
		}
	})

	t.Run("OldClaimIsTakenOver", func(t *testing.T) {
		st, tables, client := fresh(t, srv)
		ctx := t.Context()
		if err := dynamostore.PendTaskClaim(ctx, client, tables, "acme", "k", t0); err != nil {
			t.Fatal(err)
		}
		made, err := st.Tasks.Create(ctx, "acme", newTask, t0.Add(dynamostore.TakeoverDelay))
		if err != nil || made.ID != 1 || made.Replayed {
			t.Fatalf("create over an old claim = %+v, %v; want task 1 made", made, err)
		}
		// The write is recorded: a replay right after finds it.
		again, err := st.Tasks.Create(ctx, "acme", newTask, t0.Add(dynamostore.TakeoverDelay+time.Second))
		if err != nil || again.ID != 1 || !again.Replayed {
			t.Fatalf("replay = %+v, %v; want task 1 replayed", again, err)
		}
		if ids := taskIDs(t, st.Tasks, "acme"); !slices.Equal(ids, []int64{1}) {
			t.Fatalf("tasks = %v, want [1]", ids)
		}
	})

	t.Run("OldClaimTakenOverOnce", func(t *testing.T) {
		st, tables, client := fresh(t, srv)
		ctx := t.Context()
		if err := dynamostore.PendTaskClaim(ctx, client, tables, "acme", "k", t0); err != nil {
			t.Fatal(err)
		}
		const n = 10
		got := make([]store.Task, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				got[i], errs[i] = st.Tasks.Create(ctx, "acme", newTask, t0.Add(time.Minute))
			})
		}
		wg.Wait()
		made := 0
		for i := range n {
			var ip *store.InProgressError
			switch {
			case errs[i] != nil && !errors.As(errs[i], &ip):
				t.Fatalf("create %d: %v", i, errs[i])
			case errs[i] == nil && got[i].ID != 1:
				t.Fatalf("create %d answered task %d, want 1", i, got[i].ID)
			case errs[i] == nil && !got[i].Replayed:
				made++
			}
		}
		if made != 1 {
			t.Fatalf("%d creates made a task, want 1", made)
		}
		if ids := taskIDs(t, st.Tasks, "acme"); !slices.Equal(ids, []int64{1}) {
			t.Fatalf("tasks = %v, want [1]", ids)
		}
	})

	t.Run("UnrecordedWriteIsFound", func(t *testing.T) {
		st, tables, client := fresh(t, srv)
		ctx := t.Context()
		made, err := st.Tasks.Create(ctx, "acme", newTask, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Tasks.Create(ctx, "acme", store.NewTask{Title: "no key"}, t0); err != nil {
			t.Fatal(err)
		}
		// As if the request stopped after writing the task, before noting
		// it in the claim: a retry, even at once, finds the task.
		if err := dynamostore.PendTaskClaim(ctx, client, tables, "acme", "k", t0); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			again, err := st.Tasks.Create(ctx, "acme", newTask, t0.Add(time.Second))
			if err != nil || again.ID != made.ID || !again.Replayed {
				t.Fatalf("retry %d = %+v, %v; want task %d replayed", i, again, err, made.ID)
			}
		}
		if ids := taskIDs(t, st.Tasks, "acme"); !slices.Equal(ids, []int64{1, 2}) {
			t.Fatalf("tasks = %v, want [1 2]", ids)
		}
	})

	t.Run("FailedWriteReleasesClaim", func(t *testing.T) {
		st, tables, client := fresh(t, srv)
		ctx := t.Context()
		// A counter the service refuses to add to: the task write fails
		// with an answer, so surely nothing was made.
		putCounter := func(seq types.AttributeValue) {
			t.Helper()
			_, err := client.PutItem(ctx, &dynamodb.PutItemInput{
				TableName: aws.String(tables.Tasks),
				Item: map[string]types.AttributeValue{
					"tenant": &types.AttributeValueMemberS{Value: "acme"},
					"id":     &types.AttributeValueMemberN{Value: "0"},
					"seq":    seq,
				},
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		putCounter(&types.AttributeValueMemberS{Value: "not a number"})
		_, err := st.Tasks.Create(ctx, "acme", newTask, t0)
		if !errors.Is(err, store.ErrStorage) || errors.Is(err, store.ErrMaybeDone) {
			t.Fatalf("create with a broken counter: error = %v, want a storage error that changed nothing", err)
		}
		putCounter(&types.AttributeValueMemberN{Value: "0"})
		// The retry a second later need not wait for the takeover delay.
		made, err := st.Tasks.Create(ctx, "acme", newTask, t0.Add(time.Second))
		if err != nil || made.ID != 1 || made.Replayed {
			t.Fatalf("retry = %+v, %v; want task 1 made", made, err)
		}
	})

	t.Run("ClaimIsNoTask", func(t *testing.T) {
		st, _, _ := fresh(t, srv)
		ctx := t.Context()
		made, err := st.Tasks.Create(ctx, "acme", newTask, t0)
		if err != nil {
			t.Fatal(err)
		}
		id := dynamostore.TaskClaimID("k")
		if id >= 0 {
			t.Fatalf("claim id %d is not negative", id)
		}
		_, err = st.Tasks.Get(ctx, "acme", id)
		wantNotFound(t, err, "get")
		_, err = st.Tasks.Update(ctx, "acme", id, store.TaskPatch{Title: aws.String("x")}, t0)
		wantNotFound(t, err, "update")
		_, err = st.Tasks.Complete(ctx, "acme", id, t0)
		wantNotFound(t, err, "complete")
		_, err = st.Tasks.Delete(ctx, "acme", id)
		wantNotFound(t, err, "delete")
		page, err := st.Tasks.List(ctx, "acme", store.TaskQuery{After: id - 1})
		if err != nil || len(page.Tasks) != 1 || page.Tasks[0].ID != made.ID {
			t.Fatalf("list after a negative cursor = %+v, %v; want only task %d", page.Tasks, err, made.ID)
		}
		again, err := st.Tasks.Create(ctx, "acme", newTask, t0)
		if err != nil || !again.Replayed || again.ID != made.ID {
			t.Fatalf("replay after touching the claim's id = %+v, %v", again, err)
		}
	})
}

func wantNotFound(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("%s: error = %v, want ErrNotFound", what, err)
	}
}

func TestPendingMemoryClaim(t *testing.T) {
	srv := dynamotest.Start(t)
	entry := store.NewEntry{Content: "c", IdempotencyKey: "k"}
	entries := func(t *testing.T, mem store.Memory) []store.MemoryEntry {
		t.Helper()
		page, err := mem.List(t.Context(), "acme", "log", store.MemoryQuery{})
		if err != nil {
			t.Fatal(err)
		}
		return page.Entries
	}

	t.Run("YoungClaimIsInProgress", func(t *testing.T) {
		st, tables, client := fresh(t, srv)
		ctx := t.Context()
		if err := dynamostore.PendMemoryClaim(ctx, client, tables, "acme", "log", "k", t0); err != nil {
			t.Fatal(err)
		}
		_, err := st.Memory.Append(ctx, "acme", "log", entry, t0.Add(10*time.Second))
		wantInProgress(t, err, dynamostore.TakeoverDelay-10*time.Second)
		if got := entries(t, st.Memory); len(got) != 0 {
			t.Fatalf("entries = %+v, want none", got)
		}
	})

	t.Run("OldClaimIsTakenOver", func(t *testing.T) {
		st, tables, client := fresh(t, srv)
		ctx := t.Context()
		if err := dynamostore.PendMemoryClaim(ctx, client, tables, "acme", "log", "k", t0); err != nil {
			t.Fatal(err)
		}
		made, err := st.Memory.Append(ctx, "acme", "log", entry, t0.Add(time.Hour))
		if err != nil || made.Replayed {
			t.Fatalf("append over an old claim = %+v, %v", made, err)
		}
		again, err := st.Memory.Append(ctx, "acme", "log", entry, t0.Add(time.Hour+time.Second))
		if err != nil || !again.Replayed || again.ID != made.ID {
			t.Fatalf("replay = %+v, %v; want %s replayed", again, err, made.ID)
		}
		if got := entries(t, st.Memory); len(got) != 1 || got[0].ID != made.ID {
			t.Fatalf("entries = %+v, want only %s", got, made.ID)
		}
	})

	t.Run("UnrecordedWriteIsFound", func(t *testing.T) {
		st, tables, client := fresh(t, srv)
		ctx := t.Context()
		for i := range 3 {
			if _, err := st.Memory.Append(ctx, "acme", "log", store.NewEntry{Content: fmt.Sprint("before ", i)}, t0); err != nil {
				t.Fatal(err)
			}
		}
		made, err := st.Memory.Append(ctx, "acme", "log", entry, t0)
		if err != nil {
			t.Fatal(err)
		}
		if err := dynamostore.PendMemoryClaim(ctx, client, tables, "acme", "log", "k", t0); err != nil {
			t.Fatal(err)
		}
		again, err := st.Memory.Append(ctx, "acme", "log", entry, t0.Add(time.Second))
		if err != nil || !again.Replayed || again.ID != made.ID || again.Content != "c" || !again.CreatedAt.Equal(made.CreatedAt) {
			t.Fatalf("retry = %+v, %v; want %+v replayed", again, err, made)
		}
		if got := entries(t, st.Memory); len(got) != 4 {
			t.Fatalf("%d entries, want 4", len(got))
		}
	})

	// The table's stream carries claims beside entries: IsMemoryClaim
	// tells them apart, whatever the tenant is called.
	t.Run("ClaimsAreToldFromEntries", func(t *testing.T) {
		st, tables, client := fresh(t, srv)
		ctx := t.Context()
		for _, tenant := range []string{"acme", "%idem", "idem", "%25idem", "x#y"} {
			for _, e := range []store.NewEntry{{Content: "keyed", IdempotencyKey: "k"}, {Content: "plain"}} {
				if _, err := st.Memory.Append(ctx, tenant, "log", e, t0); err != nil {
					t.Fatal(err)
				}
			}
		}
		out, err := client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(tables.Memory)})
		if err != nil {
			t.Fatal(err)
		}
		claims, ents := 0, 0
		for _, m := range out.Items {
			pk := m["pk"].(*types.AttributeValueMemberS).Value
			_, isEntry := m["content"]
			if dynamostore.IsMemoryClaim(pk) == isEntry {
				t.Errorf("item %s: IsMemoryClaim = %v, has content = %v", pk, dynamostore.IsMemoryClaim(pk), isEntry)
			}
			if isEntry {
				ents++
			} else {
				claims++
			}
		}
		if claims != 5 || ents != 10 {
			t.Fatalf("%d claims and %d entries, want 5 and 10", claims, ents)
		}
	})
}

// lossyProxy stands between a client and the emulator and, once armed,
// loses the answer to the next PutItem of a task: it either sends the
// request on and never answers (the write is made), or never sends it on
// (it is not). The caller's deadline ends the call either way.
type lossyProxy struct {
	srv     *httptest.Server
	mu      sync.Mutex
	armed   bool
	forward bool // send the lost request on
}

func newLossyProxy(t *testing.T, endpoint string) *lossyProxy {
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p := &lossyProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		p.mu.Lock()
		lose := p.armed && strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".PutItem") && bytes.Contains(body, []byte(`"title"`))
		forward := p.forward
		if lose {
			p.armed = false
		}
		p.mu.Unlock()
		if !lose {
			rp.ServeHTTP(w, r)
			return
		}
		if forward {
			rp.ServeHTTP(httptest.NewRecorder(), r.Clone(context.WithoutCancel(r.Context())))
		}
		<-r.Context().Done() // no answer: the client gives up
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *lossyProxy) arm(forward bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed, p.forward = true, forward
}

// TestLostAnswer: a Create whose task write gets no answer fails with
// ErrMaybeDone; retried with its key, it answers the task if the write was
// made, and otherwise makes it once the claim may be taken over.
func TestLostAnswer(t *testing.T) {
	srv := dynamotest.Start(t)
	newTask := store.NewTask{Title: "t", IdempotencyKey: "k"}
	create := func(t *testing.T, tasks store.Tasks, now time.Time) (store.Task, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		return tasks.Create(ctx, "acme", newTask, now)
	}
	setup := func(t *testing.T) (store.Tasks, *lossyProxy) {
		tables := srv.NewTables(t)
		proxy := newLossyProxy(t, srv.Endpoint)
		client := dynamotest.NewClient(proxy.srv.URL, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
		return dynamostore.New(client, tables).Tasks, proxy
	}

	t.Run("WriteMade", func(t *testing.T) {
		tasks, proxy := setup(t)
		proxy.arm(true)
		_, err := create(t, tasks, t0)
		if !errors.Is(err, store.ErrMaybeDone) {
			t.Fatalf("create with a lost answer: error = %v, want ErrMaybeDone", err)
		}
		got, err := create(t, tasks, t0.Add(time.Second))
		if err != nil || got.ID != 1 || !got.Replayed {
			t.Fatalf("retry = %+v, %v; want task 1 replayed", got, err)
		}
		if ids := taskIDs(t, tasks, "acme"); !slices.Equal(ids, []int64{1}) {
			t.Fatalf("tasks = %v, want [1]", ids)
		}
	})

	t.Run("WriteNotMade", func(t *testing.T) {
		tasks, proxy := setup(t)
		proxy.arm(false)
		_, err := create(t, tasks, t0)
		if !errors.Is(err, store.ErrMaybeDone) {
			t.Fatalf("create with a lost request: error = %v, want ErrMaybeDone", err)
		}
		_, err = create(t, tasks, t0.Add(time.Second))
		wantInProgress(t, err, dynamostore.TakeoverDelay-time.Second)
		got, err := create(t, tasks, t0.Add(dynamostore.TakeoverDelay))
		if err != nil || got.Replayed {
			t.Fatalf("retry after the takeover delay = %+v, %v; want a task made", got, err)
		}
		if ids := taskIDs(t, tasks, "acme"); !slices.Equal(ids, []int64{got.ID}) {
			t.Fatalf("tasks = %v, want [%d]", ids, got.ID)
		}
	})
}
