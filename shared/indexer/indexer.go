// Package indexer is the deployed indexer of context_search and of the
// navigation tools' precise code intelligence: two Lambda functions from
// one bootstrap, the indexer and the index worker, that keep the indexes
// context_search reads in the bucket under indexes/, and the precise
// indexes under precise/ (shared/precisebucket).
//
// Code is indexed in batches spread over invocations, so that a
// repository of any size is indexed, each invocation bounded in time and
// memory:
//
//   - S3 ObjectCreated of snapshots/<repo>/current.json (a snapshot was
//     published; <repo> is a repository's folder, reposcope.Ref.Key:
//     <tenant> for a tenant's default repository, <tenant>/<name> for its
//     named ones) reaches the indexer, which plans the build
//     (IndexSnapshot): it lists the snapshot's searchable files, splits
//     them in path order into batches, records the build in
//     indexes/<repo>/build.json, and sends one message per batch to the
//     index queue (SQS).
//   - The index worker takes one batch message per invocation (RunBatch):
//     it reads the batch's files from the snapshot's zip, cuts and
//     tokenizes them into a part of the index, gives each chunk the
//     vector its text had in the previous index (by text hash), saves the
//     part and records it in build.json (a conditional write); the batch
//     that completes the build publishes the index: its manifest, then
//     the pointer indexes/<repo>/current.json. The index is searchable by
//     words then, however far embedding is: until then context_search
//     serves the index before, and says that a newer one is being built
//     and how far it is.
//   - A part with chunks left without a vector sends an embed message to
//     the embed queue (RunEmbed), a queue of its own so that a build's
//     batches never wait behind the hours of embedding of earlier pushes:
//     the worker embeds them, one text per request for Titan,
//     paced within the process's share of the provider's quota (a queue
//     drained within the quota: see docs/embedding.md for why not Bedrock
//     batch inference), checkpointing the vectors as it goes
//     (indexes/<repo>/<commit>/<part>/checkpoint.bin). When its time runs
//     short it saves the checkpoint and sends the message again; a retry
//     after a failed or killed invocation also resumes from the
//     checkpoint. Done, it saves the part's vectors, updates the part's
//     counts in build.json and publishes the index again (same commit,
//     new counts), and readers take the new vectors; context_search says
//     how much of the code is embedded meanwhile.
//   - A build of a later snapshot replaces the record; the batches of the
//     build it replaces stop, and their parts' vectors are reused.
//     Snapshots are ordered by the number their pointer carries
//     (repo.Pointer.Seq), not by when they are planned: a plan that took
//     long, or an event delivered late, never replaces the record of a
//     later snapshot, and the index pointer never moves back to the index
//     of an earlier one.
//   - The same event has the precise indexes pushed with the snapshot
//     (SCIP files its pointer names) converted into the stores the
//     navigation functions read, one queue message each (see Precise).
//   - The Memory table's stream (INSERT records) reaches the indexer,
//     which embeds the new entries' text into
//     indexes/<tenant>/memory/<model>.vectors.bin. Until then
//     context_search finds the entries lexically.
//
// Every step is idempotent, so SQS's and S3's at-least-once delivery and
// Lambda's retries are harmless: a published commit is not built again, a
// part recorded done is not built again, vectors are keyed by text hash.
// Stream batches report the records that failed
// (ReportBatchItemFailures), so a failing tenant is retried without
// blocking the others; so do queue batches.
//
// Without a queue (TOOLSHED_INDEX_QUEUE unset) the indexer builds every
// batch itself, one after another; without an embed queue
// (TOOLSHED_EMBED_QUEUE unset) embed messages go to the index queue.
package indexer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/toolshed/toolshed/shared/awscall"
	"github.com/toolshed/toolshed/shared/contextindex"
	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/contextindex/memorydoc"
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/family"
	"github.com/toolshed/toolshed/shared/precisebucket"
	"github.com/toolshed/toolshed/shared/repo"
	"github.com/toolshed/toolshed/shared/reposcope"
	"github.com/toolshed/toolshed/shared/settings"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/store/dynamostore"
	"github.com/toolshed/toolshed/shared/tenant"
	"github.com/toolshed/toolshed/shared/wiring"
)

// Grants are what both functions may touch besides their event sources
// (whose read permissions come with the event source mappings): read
// snapshots, read and write indexes and precise indexes (large ones as
// multipart uploads, aborted when they fail: see package objects), embed
// with Titan V2.
// Sending to the index and embed queues is granted with the queues.
var Grants = []family.Grant{
	family.Objects(repo.Prefix, "s3:GetObject"),
	family.List(repo.Prefix),
	family.Objects(indexfile.BucketPrefix, "s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"),
	family.List(indexfile.BucketPrefix),
	family.Objects(precisebucket.Prefix, "s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"),
	family.List(precisebucket.Prefix),
	family.Model(embedding.TitanV2),
}

// The indexer's settings.
var (
	// QueueURL is set by the deployment from the queue it creates.
	QueueURL = settings.New("TOOLSHED_INDEX_QUEUE", "",
		"the indexer: URL of the SQS queue of index batches, which the index worker reads; unset, the indexer builds every batch itself, in turn",
		settings.Text)
	// EmbedQueueURL is set by the deployment from the embed queue it
	// creates.
	EmbedQueueURL = settings.New("TOOLSHED_EMBED_QUEUE", "",
		"the indexer: URL of the SQS queue of embed messages (a built part's chunks to embed), which the index worker reads; unset, they go to the index queue",
		settings.Text)
	BatchFiles = settings.New("TOOLSHED_INDEX_BATCH_FILES", strconv.Itoa(defaultBatchFiles),
		"the indexer: most files in one batch (one part of a code index, built by one invocation of the index worker; a batch also stops at 8 MB of files)",
		settings.Positive)
)

// defaultBatchFiles is BatchFiles' default.
const defaultBatchFiles = 1000

// Settings are the indexer's settings a deployment may choose.
var Settings = []settings.Setting{BatchFiles}

// Env is the environment both functions are deployed with besides their
// settings. GOMEMLIMIT raises the collector's soft limit above
// gcsettings' three quarters of their 2 GB (1536 MiB): a precise
// conversion's heap is mostly live (the sort's runs before they spill),
// one of a 1 GB SCIP file reached 1.5 GB of RSS, where that limit would
// keep the collector running; the Go tree's conversions peak at 0.9-1.3
// GiB with it (docs/deploy.md).
var Env = map[string]string{"GOMEMLIMIT": "1800MiB"}

// SnapshotReader reads published snapshots: *Snapshots, the bucket's.
type SnapshotReader interface {
	// Current returns the current snapshot of the repository whose folder
	// is key (reposcope.Ref.Key): its commit, its searchable files and its
	// number.
	Current(ctx context.Context, key string) (Snapshot, error)
	// Files reads some files of the repository's snapshot of a commit.
	Files(ctx context.Context, key, commit string, paths []string) ([]contextindex.File, error)
	// View opens the repository's snapshot of a commit, as the
	// repository tools read it.
	View(ctx context.Context, key, commit string) (repo.View, error)
}

// Indexer handles the events of both functions.
type Indexer struct {
	Store     *indexfile.Store
	Embedder  contextindex.Embedder // nil: lexical code indexes, no memory vectors
	Snapshots SnapshotReader        // nil: snapshot events are refused
	// Queue takes batch messages; nil: every batch is built here, in turn.
	Queue Queue
	// EmbedQueue takes embed messages, apart from the batches so that
	// those never wait behind embedding; nil: Queue takes them.
	EmbedQueue Queue
	// Precise converts the precise indexes pushed with snapshots; nil:
	// they are not converted.
	Precise *Precise
	// BatchFiles is the most files in a batch (0: BatchFiles' default).
	BatchFiles int
	Now        func() time.Time
	Log        *slog.Logger
	// Metrics receives EMF records (shared/telemetry); nil: none.
	Metrics io.Writer
}

// New builds an Indexer from an Env: the bucket's snapshots, indexes
// (indexfile.BucketPrefix) and precise indexes (precisebucket.Prefix),
// the configured embedder and, when TOOLSHED_INDEX_QUEUE and
// TOOLSHED_EMBED_QUEUE are set, the index and embed queues.
func New(ctx context.Context, env *wiring.Env, metrics io.Writer) (*Indexer, error) {
	bucket, err := env.S3(ctx)
	if err != nil {
		return nil, err
	}
	blobs, err := env.IndexBlobs(ctx)
	if err != nil {
		return nil, err
	}
	policy, err := env.RepoPolicy()
	if err != nil {
		return nil, err
	}
	emb, err := embedding.FromEnv(ctx, env.Getenv, env.AWS)
	if err != nil {
		return nil, fmt.Errorf("embedder: %w", err)
	}
	queueURL, err1 := QueueURL.Get(env.Getenv)
	embedURL, err2 := EmbedQueueURL.Get(env.Getenv)
	files, err3 := BatchFiles.Get(env.Getenv)
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, err
	}
	maxBytes := int64(env.Config.RepoMaxMB) << 20
	ix := &Indexer{
		Store:      indexfile.NewStore(blobs),
		Embedder:   emb,
		Snapshots:  &Snapshots{Bucket: bucket, Policy: policy, MaxBytes: maxBytes},
		Precise:    &Precise{Bucket: bucket, TempDir: os.TempDir(), MemoryBytes: preciseMemoryBytes, MaxBytes: maxBytes},
		BatchFiles: files,
		Now:        env.Now,
		Log:        env.Log,
		Metrics:    metrics,
	}
	if queueURL == "" && embedURL == "" {
		return ix, nil
	}
	client, err := env.SQS(ctx)
	if err != nil {
		return nil, err
	}
	if queueURL != "" {
		ix.Queue = &SQSQueue{Client: client, URL: queueURL}
	}
	if embedURL != "" {
		ix.EmbedQueue = &SQSQueue{Client: client, URL: embedURL}
	}
	return ix, nil
}

// Handle takes one Lambda event, an S3 notification, a DynamoDB stream
// batch or an SQS batch, told apart by the records' eventSource.
func (ix *Indexer) Handle(ctx context.Context, raw json.RawMessage) (any, error) {
	// An indexer's work is in the background, not a call an agent waits
	// for: each AWS call may wait for its service's first byte as long as
	// a patient call does (awscall.Patiently), within the invocation's
	// deadline, so a busy S3 or SQS slows a plan or a batch instead of
	// failing it (and sending it round the queue again).
	ctx = awscall.Patiently(ctx)
	var probe struct {
		Records []struct {
			EventSource string `json:"eventSource"`
		} `json:"Records"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil || len(probe.Records) == 0 {
		return nil, fmt.Errorf("indexer: not an S3, DynamoDB stream or SQS event: %.200s", raw)
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
	case "aws:sqs":
		var ev events.SQSEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("indexer: decode SQS event: %w", err)
		}
		return ix.handleSQS(ctx, ev), nil
	default:
		return nil, fmt.Errorf("indexer: events from %q are not handled", src)
	}
}

// repoOf returns <repo> of a snapshots/<repo>/current.json key (the
// object whose creation publishes a snapshot); <repo> is a repository's
// folder, <tenant> or <tenant>/<name> (reposcope.Ref.Key).
func repoOf(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, repo.Prefix)
	name, ok2 := strings.CutSuffix(rest, "/"+repo.PointerName)
	return name, ok && ok2 && reposcope.CheckKey(name) == nil
}

// handleS3 plans the build of each published snapshot of the event.
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
		// The precise indexes first: queuing them is quick, and their
		// conversions need not wait for the code index's plan.
		if err := ix.IndexPrecise(ctx, repo); err != nil {
			errs = append(errs, fmt.Errorf("precise indexes of %s: %w", repo, err))
		}
		if err := ix.IndexSnapshot(ctx, repo); err != nil {
			errs = append(errs, fmt.Errorf("index %s: %w", repo, err))
		}
	}
	return errors.Join(errs...) // Lambda retries the event
}

// handleSQS runs each batch of the event and reports those that failed,
// to be delivered again.
func (ix *Indexer) handleSQS(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse {
	var resp events.SQSEventResponse
	for _, r := range ev.Records {
		embed, err := ix.runMessage(ctx, []byte(r.Body))
		if err != nil {
			receives, _ := strconv.Atoi(r.Attributes["ApproximateReceiveCount"])
			after := retryBatchAfter(receives)
			ix.Log.Error("indexer: batch failed; it will be delivered again", "message", r.MessageId,
				"receives", receives, "after_s", after.Seconds(), "error", err)
			ix.retryAfter(ctx, ix.queueOf(embed), r.ReceiptHandle, after)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		}
	}
	return resp
}

// runMessage runs one message of the index or embed queue: a precise
// index to convert, or a batch; it reports whether it was an embed
// message (which queue the message came from).
func (ix *Indexer) runMessage(ctx context.Context, body []byte) (bool, error) {
	var m preciseMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return false, err
	}
	if m.Precise != nil {
		return false, ix.RunPrecise(ctx, *m.Precise)
	}
	var b Batch
	if err := json.Unmarshal(body, &b); err != nil {
		return false, err
	}
	return b.Embed, ix.RunBatch(ctx, b)
}

// A batch that failed comes back after retryBatchFirst, doubled at each
// receive up to retryBatchMost (the queue's visibility timeout, which a
// killed invocation waits, is longer); after the queue's maximum receives
// it goes to the dead-letter queue.
const (
	retryBatchFirst = 15 * time.Second
	retryBatchMost  = 5 * time.Minute
)

// retryBatchAfter is when a batch that failed at its receives-th receive
// comes back.
func retryBatchAfter(receives int) time.Duration {
	return min(retryBatchFirst<<min(max(receives-1, 0), 8), retryBatchMost)
}

// retryAfter makes a failed message of q come back after d; failing
// that, it comes back after the queue's visibility timeout.
func (ix *Indexer) retryAfter(ctx context.Context, q Queue, receipt string, d time.Duration) {
	if q == nil || receipt == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := q.RetryAfter(ctx, receipt, d); err != nil {
		ix.Log.Warn("indexer: the failed batch comes back after the queue's visibility timeout", "error", err)
	}
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
		doc, ok := memorydoc.Of(e)
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
