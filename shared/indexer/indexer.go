// Package indexer is the indexer Lambda of context_search. It keeps the
// indexes that context_search reads in the bucket under indexes/:
//
//   - S3 ObjectCreated of snapshots/<repo>/current.json (a repository
//     snapshot was published): it builds the code index of that snapshot
//     into indexes/<repo>/<commit>/ (chunks, lexical statistics, vectors),
//     incrementally from the previous index, then points
//     indexes/<repo>/current.json at it.
//   - The Memory table's stream (INSERT records): it embeds the new
//     entries' text into indexes/<tenant>/memory/<model>.vectors.bin.
//     Until then context_search finds the entries lexically.
//
// Stream batches report the records that failed (ReportBatchItemFailures),
// so a failing tenant is retried without blocking the others; work is
// idempotent (vectors are keyed by text hash, an already indexed commit is
// skipped).
package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
	"github.com/toolshed/toolshed/shared/tenant"
	"github.com/toolshed/toolshed/shared/wiring"
)

// Grants are what the deployed indexer may touch besides its stream
// (whose read permissions come with the event source mapping): read
// snapshots, read and write indexes (large ones as multipart uploads,
// aborted when they fail: see package objects), embed with Titan V2.
var Grants = []family.Grant{
	family.Objects(repo.Prefix, "s3:GetObject"),
	family.List(repo.Prefix),
	family.Objects(contextindex.BucketPrefix, "s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"),
	family.List(contextindex.BucketPrefix),
	family.Model(embedding.TitanV2),
}

// Snapshots opens a published repository snapshot: its files as the
// repository walker lists them, and its commit.
type Snapshots interface {
	Open(ctx context.Context, repo string) (contextindex.Snapshot, error)
}

// Indexer handles the indexer Lambda's events.
type Indexer struct {
	Store     *contextindex.Store
	Embedder  contextindex.Embedder // nil: lexical code indexes, no memory vectors
	Snapshots Snapshots             // nil: snapshot events are refused
	Now       func() time.Time
	Log       *slog.Logger
}

// New builds an Indexer from an Env: the bucket's indexes
// (contextindex.BucketPrefix) and the configured embedder.
func New(ctx context.Context, env *wiring.Env, snapshots Snapshots) (*Indexer, error) {
	bucket, err := env.S3(ctx)
	if err != nil {
		return nil, err
	}
	emb, err := embedding.FromEnv(ctx, env.Getenv, env.AWS)
	if err != nil {
		return nil, fmt.Errorf("embedder: %w", err)
	}
	return &Indexer{
		Store:     contextindex.NewStore(&contextindex.S3Blobs{Bucket: bucket, Prefix: contextindex.BucketPrefix}),
		Embedder:  emb,
		Snapshots: snapshots,
		Now:       time.Now,
		Log:       env.Log,
	}, nil
}

// Handle takes one Lambda event, an S3 notification or a DynamoDB stream
// batch, told apart by the records' eventSource.
func (ix *Indexer) Handle(ctx context.Context, raw json.RawMessage) (any, error) {
	var probe struct {
		Records []struct {
			EventSource string `json:"eventSource"`
		} `json:"Records"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil || len(probe.Records) == 0 {
		return nil, fmt.Errorf("indexer: not an S3 or DynamoDB stream event: %.200s", raw)
	}
	switch src := probe.Records[0].EventSource; src {
	case "aws:s3":
		var ev events.S3Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("indexer: decode S3 event: %w", err)
		}
		return nil, ix.handleS3(ctx, ev)
	case "aws:dynamodb":
		var ev events.DynamoDBEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("indexer: decode stream event: %w", err)
		}
		return ix.handleStream(ctx, ev), nil
	default:
		return nil, fmt.Errorf("indexer: events from %q are not handled", src)
	}
}

// repoOf returns <repo> of a snapshots/<repo>/current.json key (the
// object whose creation publishes a snapshot); <repo> is a tenant.
func repoOf(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, repo.Prefix)
	name, ok2 := strings.CutSuffix(rest, "/"+repo.PointerName)
	return name, ok && ok2 && tenant.Valid(name)
}

// handleS3 indexes each published snapshot of the event.
func (ix *Indexer) handleS3(ctx context.Context, ev events.S3Event) error {
	var errs []error
	for _, r := range ev.Records {
		key, err := url.QueryUnescape(r.S3.Object.Key)
		if err != nil {
			errs = append(errs, fmt.Errorf("key %q: %w", r.S3.Object.Key, err))
			continue
		}
		repo, ok := repoOf(key)
		if !ok || !strings.HasPrefix(r.EventName, "ObjectCreated:") {
			ix.Log.Info("indexer: ignoring S3 event", "event", r.EventName, "key", key)
			continue
		}
		if err := ix.IndexSnapshot(ctx, repo); err != nil {
			errs = append(errs, fmt.Errorf("index %s: %w", repo, err))
		}
	}
	return errors.Join(errs...) // Lambda retries the event
}

// IndexSnapshot builds the code index of repo's current snapshot, unless
// that commit is indexed already.
func (ix *Indexer) IndexSnapshot(ctx context.Context, repo string) error {
	if ix.Snapshots == nil {
		return errors.New("no snapshot reader is configured")
	}
	snap, err := ix.Snapshots.Open(ctx, repo)
	if err != nil {
		return fmt.Errorf("open snapshot: %w", err)
	}
	// The pointer says what is indexed: a repeated event (S3 notifies at
	// least once) stops here without loading the index.
	p, _, err := ix.Store.Pointer(ctx, repo, "")
	if err == nil && snap.Commit != "" && p.Commit == snap.Commit && (ix.Embedder == nil || p.Model == ix.Embedder.Model()) {
		ix.Log.Info("indexer: snapshot already indexed", "repo", repo, "commit", snap.Commit)
		return nil
	}
	var prev *contextindex.CodeIndex
	if err == nil {
		prev, err = ix.Store.LoadCode(ctx, repo, p)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		ix.Log.Warn("indexer: previous index unreadable; building from scratch", "repo", repo, "error", err)
	}
	start := time.Now()
	code, st, err := contextindex.BuildCode(ctx, prev, snap, ix.Embedder, ix.Now())
	if err != nil {
		return err
	}
	if err := ix.Store.SaveCode(ctx, repo, code); err != nil {
		return err
	}
	ix.Log.Info("indexer: code indexed", "repo", repo, "commit", code.Commit, "files", st.Files,
		"rechunked", st.Rechunked, "chunks", st.Chunks, "embedded", st.Embedded, "duration_ms", time.Since(start).Milliseconds())
	return nil
}

// handleStream embeds the memory entries the batch inserted, tenant by
// tenant, and reports the first record of each tenant that failed.
func (ix *Indexer) handleStream(ctx context.Context, ev events.DynamoDBEvent) events.DynamoDBEventResponse {
	var resp events.DynamoDBEventResponse
	if ix.Embedder == nil {
		return resp // lexical only: context_search reads entries from the table
	}
	type group struct {
		firstSeq string
		docs     []contextindex.Doc
	}
	groups := map[string]*group{}
	var order []string
	for _, r := range ev.Records {
		if r.EventName != string(events.DynamoDBOperationTypeInsert) {
			continue // entries are never modified; removals leave harmless vectors
		}
		if pk, ok := r.Change.NewImage["pk"]; ok && pk.DataType() == events.DataTypeString && dynamostore.IsMemoryClaim(pk.String()) {
			continue // an idempotency key's claim, not an entry
		}
		e, ok := entryOf(r.Change.NewImage)
		if !ok {
			ix.Log.Warn("indexer: stream record is not a memory entry", "event", r.EventID)
			continue
		}
		doc, ok := contextindex.MemoryDoc(e)
		if !ok {
			continue
		}
		g := groups[e.Tenant]
		if g == nil {
			g = &group{firstSeq: r.Change.SequenceNumber}
			groups[e.Tenant] = g
			order = append(order, e.Tenant)
		}
		g.docs = append(g.docs, doc)
	}
	for _, tenant := range order {
		g := groups[tenant]
		n, err := ix.Store.AddMemoryVectors(ctx, tenant, ix.Embedder, g.docs)
		if err != nil {
			ix.Log.Error("indexer: embedding memory entries failed", "tenant", tenant, "error", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: g.firstSeq})
			continue
		}
		ix.Log.Info("indexer: memory entries embedded", "tenant", tenant, "entries", len(g.docs), "embedded", n)
	}
	return resp
}

// entryOf reads a Memory table item (see shared/store/dynamostore).
func entryOf(img map[string]events.DynamoDBAttributeValue) (store.MemoryEntry, bool) {
	str := func(k string) string {
		v, ok := img[k]
		if !ok || v.DataType() != events.DataTypeString {
			return ""
		}
		return v.String()
	}
	e := store.MemoryEntry{Tenant: str("tenant"), File: str("file"), ID: str("id"), Content: str("content")}
	created, err := time.Parse(time.RFC3339Nano, str("created_at"))
	if err != nil || !tenant.Valid(e.Tenant) || e.File == "" || !store.ValidMemoryID(e.ID) {
		return store.MemoryEntry{}, false
	}
	e.CreatedAt = created
	return e, true
}
