package indexer

import (
	"time"

	"github.com/toolshed/toolshed/shared/contextindex/indexfile"
	"github.com/toolshed/toolshed/shared/telemetry"
)

// The indexer's metrics, in telemetry.Namespace without dimensions; the
// deployment's dashboard and alarms read them.
const (
	// Per embed round (one invocation's embedding of one part).
	MetricRoundSeconds  = "IndexRoundSeconds"
	MetricEmbedded      = "IndexEmbedded"      // texts embedded
	MetricEmbedRequests = "IndexEmbedRequests" // requests to the embedder
	MetricThrottled     = "IndexThrottled"     // requests refused for the provider's quota
	MetricEmbedFailed   = "IndexEmbedFailed"   // texts refused for good
	MetricEmbedTokens   = "IndexEmbedTokens"   // input tokens the provider counted (billed)
	// Per index published.
	MetricPublished    = "IndexPublished"
	MetricBuildSeconds = "IndexBuildSeconds" // from the snapshot's plan to its publication
	MetricFiles        = "IndexFiles"
	MetricChunks       = "IndexChunks"
	MetricVectors      = "IndexVectors"      // chunks with a vector
	MetricFailedChunks = "IndexFailedChunks" // chunks without one (found lexically only)
)

// roundMetrics writes the metrics of a batch round.
func (ix *Indexer) roundMetrics(r round, took time.Duration) {
	if ix.Metrics == nil {
		return
	}
	telemetry.WriteMetrics(ix.Metrics, ix.Now(), nil, []telemetry.Metric{
		{Name: MetricRoundSeconds, Unit: "Seconds", Value: took.Seconds()},
		{Name: MetricEmbedded, Unit: "Count", Value: float64(r.stats.Embedded)},
		{Name: MetricEmbedRequests, Unit: "Count", Value: float64(r.stats.Requests)},
		{Name: MetricThrottled, Unit: "Count", Value: float64(r.stats.Throttled)},
		{Name: MetricEmbedFailed, Unit: "Count", Value: float64(r.stats.Failed)},
		{Name: MetricEmbedTokens, Unit: "Count", Value: float64(r.stats.Tokens)},
	})
}

// publishMetrics writes the metrics of an index published.
func (ix *Indexer) publishMetrics(t indexfile.PartInfo, took time.Duration) {
	if ix.Metrics == nil {
		return
	}
	telemetry.WriteMetrics(ix.Metrics, ix.Now(), nil, []telemetry.Metric{
		{Name: MetricPublished, Unit: "Count", Value: 1},
		{Name: MetricBuildSeconds, Unit: "Seconds", Value: took.Seconds()},
		{Name: MetricFiles, Unit: "Count", Value: float64(t.Files)},
		{Name: MetricChunks, Unit: "Count", Value: float64(t.Chunks)},
		{Name: MetricVectors, Unit: "Count", Value: float64(t.Vectors)},
		{Name: MetricFailedChunks, Unit: "Count", Value: float64(t.Failed)},
	})
}
