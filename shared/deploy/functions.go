package deploy

import (
	"github.com/toolshed/toolshed/shared/embedding"
	"github.com/toolshed/toolshed/shared/settings"
)

// The sizes of the functions that are not tools, declared here so that the
// CDK app (infra/), the harness that runs the bootstraps as deployed
// (shared/testenv/deploytest) and the cost model (scripts/cost) read the
// same numbers. A tool function's memory is its family's and its timeout
// its contract's deadline plus TimeoutMargin.
//
// The gateway's timeout is below API Gateway's 30 s integration limit, so
// that the gateway answers (and logs) a call that runs long instead of API
// Gateway cutting it off; every tool's is below the gateway's. The
// authorizer and the gateway get a floor of reserved concurrency: whatever
// floods the tools, they still run.
const (
	GatewayTimeoutSeconds    = 29
	GatewayMemoryMB          = 512
	GatewayConcurrency       = 20
	AuthorizerTimeoutSeconds = 5
	AuthorizerMemoryMB       = 256
	AuthorizerConcurrency    = 20
	// The indexer plans code index builds (it reads a snapshot's files
	// to split them into batches: memory for the largest snapshot) and
	// embeds memory entries; two at once at most (S3 retries a throttled
	// event for up to asyncEventAge).
	IndexerTimeoutSeconds = 900
	IndexerMemoryMB       = 2048
	IndexerConcurrency    = 2
	// The index worker builds one batch per invocation: a few minutes at
	// most (a batch that needs more continues in a new message), memory
	// for a snapshot's zip and one batch. It reads two queues, each
	// through a mapping of its own capped at its share of the worker's
	// reserved concurrency, so that builds never wait behind embedding:
	// the index queue's batches (and precise conversions),
	// IndexBuildConcurrency at once, and the embed queue's rounds,
	// EmbedConcurrency at once, as many as the embedding quota is worth
	// (each keeps 8 requests in flight; each paces itself at its share
	// of the quota, split over this many). It also converts one precise index per invocation (shared/indexer's
	// Precise): one SCIP file per module or project a push indexed (the
	// Go tree's 190 MB converts at about 0.9 GB resident; docs/deploy.md
	// has the figures), writing the store and spilling to /tmp:
	// ephemeral storage for a SCIP file as large as a repository may be
	// (TOOLSHED_REPO_MAX_MB, 2 GB) needs about 0.6 GB;
	// IndexWorkerStorageMB leaves room.
	IndexWorkerTimeoutSeconds = 300
	IndexWorkerMemoryMB       = 2048
	IndexWorkerStorageMB      = 2048
	IndexBuildConcurrency     = 4
	EmbedConcurrency          = embedding.IndexWorkers
	IndexWorkerConcurrency    = IndexBuildConcurrency + EmbedConcurrency
)

// Architecture is every function's instruction set (Graviton: the lower
// price per GB-second); `make build` builds the bootstraps for it.
const Architecture = "arm64"

// LayerFolder is the build folder of a Lambda layer (family.Layers), next
// to the bootstraps: `make build` lays out the git layer in
// build/git-layer.
func LayerFolder(layer string) string { return layer + "-layer" }

// LogRetentionDays is how long every log group keeps its lines.
const LogRetentionDays = 30

// AlarmMetrics is how many metrics the stack's alarms watch (CloudWatch
// bills an alarm per metric it reads) for the numbers of functions, tools
// and tables: per function its errors, throttles and p99 duration; per
// tool its error rate and share rate-limited (two metrics each) and its
// p99; per table its read and write throttles; the HTTP API's 5xx share
// (two) and p99 latency; the indexer's failed events, stream age and the
// dead letters of the index and embed queues. infra/monitoring.go makes the alarms; its test counts them
// against this.
func AlarmMetrics(functions, tools, tables int) int {
	return 3*functions + 5*tools + 2*tables + 3 + 4
}

// SnapshotRetentionOption is the CDK app's option (-c
// snapshotRetentionDays=N) of how long the bucket keeps a snapshot that
// is no longer current: declared here for the cost model, which prices
// the snapshots kept.
var SnapshotRetentionOption = settings.New("snapshotRetentionDays", "30",
	"days a snapshot that is no longer current (and old versions under `snapshots/`) is kept", settings.Positive)
