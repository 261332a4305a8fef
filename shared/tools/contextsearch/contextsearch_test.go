package contextsearch_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/cursor"
	"github.com/toolshed/toolshed/shared/memoryfile"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/testenv/embedtest"
	"github.com/toolshed/toolshed/shared/testenv/tooltest"
	"github.com/toolshed/toolshed/shared/toolerr"
	"github.com/toolshed/toolshed/shared/tools/contextsearch"
	"github.com/toolshed/toolshed/shared/tools/memory"
	"github.com/toolshed/toolshed/shared/wiring"
)

// result and output are context_search's answer, decoded.
type (
	result = contextsearch.Result
	output = contextsearch.Output
)

// seedDiscoveries are the three discoveries of context_search's specification.
var seedDiscoveries = []string{
	`{"timestamp":"2025-01-15T10:00:00Z","type":"pattern","module":"auth","session":"s-3","content":"Use JWT tokens stored in httpOnly cookies for auth"}`,
	`{"timestamp":"2025-01-14T10:00:00Z","type":"pattern","module":"auth","session":"s-2","content":"Implement token refresh with mutex locks to prevent race conditions"}`,
	`{"timestamp":"2025-01-10T09:00:00Z","type":"issue","module":"auth","session":"s-1","content":"Token refresh race condition fixed with mutex lock"}`,
}

// otherDiscoveries are 32 discoveries of a project's other modules, some
// sharing words with the seed's queries (tokens, workers, issues).
var otherDiscoveries = []struct{ typ, module, text string }{
	{"decision", "db", "Chose PostgreSQL over MongoDB because billing data is relational"},
	{"pattern", "db", "Wrap multi-table writes in a single transaction with retries on serialization failure"},
	{"issue", "db", "Connection pool exhausted under load; raised max connections and added timeouts"},
	{"rule", "db", "Every migration must be reversible and reviewed before deploy"},
	{"pattern", "api", "Paginate list endpoints with opaque cursor tokens, never offsets"},
	{"rule", "api", "Return RFC 7807 problem details for every error response"},
	{"issue", "api", "Rate limiter counted retries twice; now keyed by request id"},
	{"decision", "api", "Version the public API in the URL path (/v1, /v2)"},
	{"pattern", "ui", "Keep form state in a reducer and validate on blur"},
	{"issue", "ui", "Date picker showed UTC instead of local time"},
	{"rule", "ui", "All interactive elements need visible focus styles"},
	{"decision", "ui", "Adopted Tailwind for styling instead of CSS modules"},
	{"pattern", "billing", "Compute invoices from immutable usage events"},
	{"issue", "billing", "Proration rounding error on plan downgrade"},
	{"decision", "billing", "Stripe webhooks are processed by background workers with idempotency keys"},
	{"rule", "billing", "Store money as integer cents"},
	{"pattern", "deploy", "Blue-green deploys with automatic rollback on failed health checks"},
	{"issue", "deploy", "Container images grew to 2 GB; switched to multi-stage builds"},
	{"rule", "deploy", "Never deploy on Fridays after 3pm"},
	{"decision", "logging", "Structured JSON logs with request ids, shipped to CloudWatch"},
	{"pattern", "logging", "Redact secrets and personal data before logging"},
	{"issue", "logging", "Log volume spiked from debug logging left on in production"},
	{"pattern", "cache", "Cache-aside with jittered TTLs to avoid stampedes"},
	{"issue", "cache", "Stale product prices after cache invalidation message was lost"},
	{"decision", "search", "Use OpenSearch for full-text product search"},
	{"pattern", "email", "Send transactional email through a queue so request handlers never block"},
	{"issue", "email", "Bounce handling ignored soft bounces"},
	{"rule", "testing", "Integration tests run against real containers, not mocks"},
	{"pattern", "testing", "Table-driven tests with named cases"},
	{"decision", "infra", "Terraform state lives in S3 with DynamoDB locking"},
	{"issue", "infra", "NAT gateway costs doubled after enabling a second availability zone"},
	{"pattern", "i18n", "Load translations lazily per route"},
}

// harness serves the memory tools and context_search over stores st.
type harness struct {
	*tooltest.Harness
	svc *contextsearch.Service
}

func newHarness(t *testing.T, st store.Stores, o contextsearch.Options) harness {
	t.Helper()
	o.Memory = st.Memory
	if o.Blobs == nil {
		o.Blobs = &indexfile.MemBlobs{}
		o.Mode = wiring.CodeIndexLive
	}
	svc := contextsearch.New(o)
	t.Cleanup(svc.Close)
	tools := append(memory.Tools(st.Memory, tooltest.NewClock().Now, cursor.RandomKey()), contextsearch.Tools(svc)...)
	return harness{Harness: tooltest.New(t, st, tools), svc: svc}
}

func (h harness) write(t *testing.T, tenant, file, entry string) {
	t.Helper()
	args := fmt.Sprintf(`{"file":%q,"entry":%s}`, file, entry)
	if file == memoryfile.BestPractices {
		args = fmt.Sprintf(`{"file":%q,"content":%q}`, file, entry)
	}
	h.OK(t, tenant, memory.WriteTool, args, nil)
}

func (h harness) search(t *testing.T, tenant, args string) output {
	t.Helper()
	var out output
	h.OK(t, tenant, contextsearch.Tool, args, &out)
	return out
}

// fixture writes the seed's discoveries among the others for tenant.
func (h harness) fixture(t *testing.T, tenant string) {
	t.Helper()
	for i, d := range otherDiscoveries {
		h.write(t, tenant, memoryfile.Decisions, fmt.Sprintf(`{"timestamp":"2024-12-%02dT10:00:00Z","type":%q,"module":%q,"content":%q}`,
			i%28+1, d.typ, d.module, d.text))
	}
	for _, d := range seedDiscoveries {
		h.write(t, tenant, memoryfile.Decisions, d)
	}
	h.write(t, tenant, memoryfile.ProgressLog, `{"timestamp":"2025-01-15T12:00:00Z","event":"session_end","summary":"Reviewed the login flow and the session cookie settings"}`)
	h.write(t, tenant, memoryfile.BestPractices, "Prefer small, reviewed pull requests.")
}

// TestSeedExamples is the acceptance of the specification's two examples on a
// tenant holding the seed's three discoveries among 32 others, on both
// stores.
func TestSeedExamples(t *testing.T) {
	for _, be := range tooltest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			h := newHarness(t, be.NewStores(t), contextsearch.Options{})
			h.fixture(t, "acme")

			out := h.search(t, "acme", `{"query":"how does authentication work","type":"all","limit":5}`)
			if len(out.Results) < 2 || out.Mode != "lexical" || out.Degraded {
				t.Fatalf("example 1: %+v", out)
			}
			top := []string{out.Results[0].Content, out.Results[1].Content}
			for _, want := range []string{"Use JWT tokens stored in httpOnly cookies for auth", "Implement token refresh with mutex locks to prevent race conditions"} {
				if top[0] != want && top[1] != want {
					t.Errorf("example 1: the two auth patterns must come first, got %q", top)
				}
			}
			for _, r := range out.Results[:2] {
				if r.Type != "pattern" || r.Module == nil || *r.Module != "auth" || r.Source != "discovery" || r.Session == nil || r.Date == nil {
					t.Errorf("example 1 result %+v", r)
				}
			}

			out = h.search(t, "acme", `{"query":"token refresh issue","type":"issue","module":"auth","limit":3}`)
			if len(out.Results) == 0 || out.Results[0].Content != "Token refresh race condition fixed with mutex lock" {
				t.Fatalf("example 2: %+v", out.Results)
			}
			r := out.Results[0]
			if r.Type != "issue" || *r.Module != "auth" || *r.Session != "s-1" || *r.Date != "2025-01-10T09:00:00Z" || r.Score <= 0 || r.Score > 1 {
				t.Errorf("example 2 result %+v", r)
			}
			for _, r := range out.Results {
				if r.Type != "issue" || *r.Module != "auth" {
					t.Errorf("example 2: filters let %+v through", r)
				}
			}
		})
	}
}

// TestHasMore: an answer says whether results beyond limit match.
func TestHasMore(t *testing.T) {
	h := newHarness(t, tooltest.BoltStores(t), contextsearch.Options{})
	for i := range 3 {
		h.write(t, "acme", memoryfile.Decisions, fmt.Sprintf(`{"timestamp":"2025-02-0%dT08:00:00Z","type":"rule","content":"zqxpaging rule %d"}`, i+1, i))
	}
	for limit, want := range map[int]bool{1: true, 2: true, 3: false, 10: false} {
		out := h.search(t, "acme", fmt.Sprintf(`{"query":"zqxpaging","limit":%d}`, limit))
		if out.HasMore != want || out.TotalFound != min(limit, 3) || len(out.Results) != out.TotalFound {
			t.Errorf("limit %d: hasMore %v, %d of %d results", limit, out.HasMore, len(out.Results), out.TotalFound)
		}
	}
}

// TestMapping checks the memory-entry mapping the contract documents.
func TestMapping(t *testing.T) {
	h := newHarness(t, tooltest.BoltStores(t), contextsearch.Options{})
	h.write(t, "acme", memoryfile.Decisions, `{"timestamp":"2025-02-01T08:00:00Z","type":"Rule","module":"api","summary":"Quarterly summary of throttling"}`)
	h.write(t, "acme", memoryfile.Decisions, `{"timestamp":"2025-02-02T08:00:00Z","type":"chore","decision":"Throttling decision text"}`)
	h.write(t, "acme", memoryfile.ProgressLog, `{"timestamp":"2025-02-03T08:00:00Z","session":"s-9","event":"throttling investigated"}`)
	h.write(t, "acme", memoryfile.BestPractices, "## Throttling\n\nBack off exponentially when throttled.")
	out := h.search(t, "acme", `{"query":"throttling","limit":10}`)
	got := map[string]string{}
	for _, r := range out.Results {
		mod, ses := "-", "-"
		if r.Module != nil {
			mod = *r.Module
		}
		if r.Session != nil {
			ses = *r.Session
		}
		got[r.Content] = r.Source + "/" + r.Type + "/" + mod + "/" + ses
		if !strings.Contains(r.ID, "#") {
			t.Errorf("id %q does not name its memory file", r.ID)
		}
	}
	want := map[string]string{
		"Quarterly summary of throttling":                         "discovery/rule/api/-",
		"Throttling decision text":                                "discovery/decision/-/-",
		"throttling investigated":                                 "session/session/-/s-9",
		"## Throttling\n\nBack off exponentially when throttled.": "discovery/pattern/-/-",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("mapping:\n got %v\nwant %v", got, want)
	}
	// Type filters keep discoveries only; session notes never match them.
	out = h.search(t, "acme", `{"query":"throttling","type":"pattern"}`)
	if len(out.Results) != 1 || out.Results[0].Type != "pattern" {
		t.Errorf("type pattern: %+v", out.Results)
	}
}

func TestErrors(t *testing.T) {
	h := newHarness(t, tooltest.BoltStores(t), contextsearch.Options{})
	e := h.Fail(t, "acme", contextsearch.Tool, `{"query":"ab"}`, toolerr.InvalidInput)
	if e.Message != "Query must be at least 3 characters" {
		t.Errorf("short query message %q", e.Message)
	}
	h.Fail(t, "acme", contextsearch.Tool, `{"query":"  x  "}`, toolerr.InvalidInput)
	e = h.Fail(t, "acme", contextsearch.Tool, `{"query":"how does authentication work"}`, toolerr.ResourceNotFound)
	if e.Message != "No embeddings found. Run initial session to generate context." || e.Details["fallback"] != "Use grep_codebase for text search" {
		t.Errorf("nothing indexed: %+v", e)
	}
	// Another tenant's discoveries do not count, and are never shown.
	h.fixture(t, "other")
	h.Fail(t, "acme", contextsearch.Tool, `{"query":"how does authentication work"}`, toolerr.ResourceNotFound)
	h.write(t, "acme", memoryfile.Decisions, `{"timestamp":"2025-01-01T00:00:00Z","content":"Our only note"}`)
	out := h.search(t, "acme", `{"query":"authentication token refresh note","limit":20}`)
	if len(out.Results) != 1 || out.Results[0].Content != "Our only note" {
		t.Errorf("acme sees %+v", out.Results)
	}
}

// TestFreshDiscoveryFoundAtOnce: a warm index picks up an entry written
// after its first search, on the next call.
func TestFreshDiscoveryFoundAtOnce(t *testing.T) {
	for _, be := range tooltest.Backends(t) {
		t.Run(be.Name, func(t *testing.T) {
			h := newHarness(t, be.NewStores(t), contextsearch.Options{})
			h.fixture(t, "acme")
			if out := h.search(t, "acme", `{"query":"kubernetes autoscaling"}`); len(out.Results) != 0 {
				t.Fatalf("before: %+v", out.Results)
			}
			h.write(t, "acme", memoryfile.Decisions, `{"timestamp":"2025-01-16T10:00:00Z","type":"decision","module":"infra","content":"Run workers on Kubernetes with horizontal autoscaling"}`)
			out := h.search(t, "acme", `{"query":"kubernetes autoscaling"}`)
			if len(out.Results) != 1 || !strings.Contains(out.Results[0].Content, "Kubernetes") {
				t.Errorf("after: %+v", out.Results)
			}
		})
	}
}

// ---- embeddings ----

// TestHybridLocal: locally, memory entries are embedded in the background
// and once only; until then searches are lexical and say so; an embedder
// failure serves lexical results marked degraded.
func TestHybridLocal(t *testing.T) {
	srv, emb := embedtest.Start(t)
	h := newHarness(t, tooltest.BoltStores(t), contextsearch.Options{Embedder: emb})
	h.fixture(t, "acme")

	out := h.search(t, "acme", `{"query":"token refresh race"}`)
	if out.Mode != "lexical" || out.Degraded || !strings.Contains(out.Notice, "background") {
		t.Errorf("before vectors: mode %s degraded %v notice %q", out.Mode, out.Degraded, out.Notice)
	}
	h.svc.Settle()
	embedded := srv.Texts.Load()
	if embedded != int64(len(otherDiscoveries)+len(seedDiscoveries)+2) {
		t.Errorf("%d texts embedded, want one per entry", embedded)
	}
	out = h.search(t, "acme", `{"query":"token refresh race"}`)
	if out.Mode != "hybrid" || out.Degraded || out.Notice != "" {
		t.Fatalf("with vectors: %+v", out)
	}
	if c := out.Results[0].Content; !strings.Contains(c, "race condition") {
		t.Errorf("hybrid best %q", c)
	}
	h.search(t, "acme", `{"query":"token refresh race"}`)
	h.svc.Settle()
	if got := srv.Texts.Load(); got != embedded+2 {
		t.Errorf("%d texts embedded after two more searches; want only the 2 queries (entries are cached)", got-embedded)
	}
	// A new entry is found lexically before its vector exists.
	h.write(t, "acme", memoryfile.Decisions, `{"timestamp":"2025-01-20T10:00:00Z","type":"rule","module":"auth","content":"Rotate signing keys every ninety days"}`)
	out = h.search(t, "acme", `{"query":"rotate signing keys"}`)
	if out.Mode != "hybrid" || out.Results[0].Content != "Rotate signing keys every ninety days" {
		t.Errorf("fresh entry: %+v", out)
	}
	h.svc.Settle()

	srv.Fail.Store(true)
	out = h.search(t, "acme", `{"query":"token refresh race","type":"issue","module":"auth"}`)
	if out.Mode != "lexical" || !out.Degraded || !strings.Contains(out.Notice, "Failed to generate query embedding") {
		t.Errorf("embedder down: mode %s degraded %v notice %q", out.Mode, out.Degraded, out.Notice)
	}
	if len(out.Results) != 1 || !strings.Contains(out.Results[0].Content, "race condition") {
		t.Errorf("embedder down: results %+v", out.Results)
	}
}

// ---- helpers shared by the code tests ----

// dirSource serves a directory as every tenant's repository snapshot (the
// repository walker's job in production; test directories hold only
// source files). It counts snapshots taken.
type dirSource struct {
	root  string
	mu    sync.Mutex
	calls int
}

func (d *dirSource) Open(ctx context.Context, tenant string) (contextindex.Snapshot, error) {
	d.mu.Lock()
	d.calls++
	d.mu.Unlock()
	var files []contextindex.File
	err := filepath.WalkDir(d.root, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(d.root, p)
		files = append(files, contextindex.File{Path: filepath.ToSlash(rel)})
		return nil
	})
	return contextindex.Snapshot{FS: os.DirFS(d.root), Files: files}, err
}

// newBolt returns stores on a fresh embedded database.
// countingBlobs counts the reads of the indexes it keeps.
type countingBlobs struct {
	indexfile.MemBlobs
	gets atomic.Int64
}

func (c *countingBlobs) Get(ctx context.Context, key, etag string) ([]byte, string, error) {
	c.gets.Add(1)
	return c.MemBlobs.Get(ctx, key, etag)
}

// TestLocalReadsIndexesAfterSaves: building locally, the service reads
// the stored indexes again only after its builder saved new ones, not on
// every call.
func TestLocalReadsIndexesAfterSaves(t *testing.T) {
	_, emb := embedtest.Start(t)
	blobs := &countingBlobs{}
	h := newHarness(t, tooltest.BoltStores(t), contextsearch.Options{Embedder: emb, Blobs: blobs, Mode: wiring.CodeIndexLive})
	h.fixture(t, "acme")
	h.search(t, "acme", `{"query":"token refresh race"}`)
	h.svc.Settle() // the entries' vectors are saved
	if out := h.search(t, "acme", `{"query":"token refresh race"}`); out.Mode != "hybrid" {
		t.Fatalf("after the vectors were saved: mode %s", out.Mode)
	}
	h.svc.Settle()
	reads := blobs.gets.Load()
	for range 3 {
		h.search(t, "acme", `{"query":"token refresh race"}`)
	}
	h.svc.Settle()
	if got := blobs.gets.Load() - reads; got != 0 {
		t.Errorf("3 searches with nothing saved read the stored indexes %d times", got)
	}
	h.write(t, "acme", memoryfile.Decisions, `{"timestamp":"2025-01-20T10:00:00Z","type":"rule","module":"auth","content":"Rotate signing keys every ninety days"}`)
	h.search(t, "acme", `{"query":"rotate signing keys"}`)
	h.svc.Settle() // the new entry's vector is saved
	reads = blobs.gets.Load()
	h.search(t, "acme", `{"query":"rotate signing keys"}`)
	if blobs.gets.Load() == reads {
		t.Error("the search after a save did not read the new vectors")
	}
}
