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
// backoff and give up when the context ends. When they give up, the error
// says why in a way callers can test: ErrThrottled (the provider's quota)
// or ErrUnavailable (server errors, connection failures), which are worth
// trying again later; any other error is not. Each adapter says how many
// texts one of its requests takes (TextsPerRequest), so a caller embedding
// many texts (the indexer) can keep requests of the right size in flight.
package embedding

import (
	"errors"
	"math/rand/v2"
	"time"
)

// Why an embedder gave up, for callers that try again later.
var (
	// ErrThrottled: the provider refused for its quota (HTTP 429,
	// Bedrock's ThrottlingException), every attempt.
	ErrThrottled = errors.New("embedding provider throttled the requests")
	// ErrUnavailable: the provider failed (5xx, connection failures,
	// timeouts), every attempt.
	ErrUnavailable = errors.New("embedding provider unavailable")
)

// Transient reports whether err says the provider was throttled or
// unavailable: the same texts may well be embedded later.
func Transient(err error) bool {
	return errors.Is(err, ErrThrottled) || errors.Is(err, ErrUnavailable)
}

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
