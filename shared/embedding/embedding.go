// Package embedding turns texts into vectors for context_search, with one
// adapter per provider behind contextindex.Embedder:
//
//   - Bedrock: Amazon Titan Text Embeddings V2 through the AWS SDK's
//     bedrockruntime client (the default when deployed).
//   - OpenAI: any OpenAI-compatible POST /v1/embeddings endpoint (OpenAI,
//     Ollama, LM Studio, vLLM), batched.
//   - none: no embedder; context_search ranks lexically (the local default).
//
// Both adapters retry throttling and server errors with exponential
// backoff and give up when the context ends.
package embedding

import (
	"math/rand/v2"
	"time"
)

// Backoff is the wait before retry attempt n (1 for the first retry):
// exponential from base, at most limit, with full jitter.
func Backoff(base, limit time.Duration) func(n int) time.Duration {
	return func(n int) time.Duration {
		d := base << min(n-1, 16)
		if d <= 0 || d > limit {
			d = limit
		}
		return d/2 + rand.N(d/2+1)
	}
}
