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
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/toolshed/toolshed/shared/config"
	"github.com/toolshed/toolshed/shared/contextindex"
)

// FromConfig returns the configured embedder, or nil for none. awsConfig
// loads the AWS configuration (only asked for Bedrock). An empty
// cfg.Embedder is none.
func FromConfig(ctx context.Context, cfg config.Config, awsConfig func(context.Context) (aws.Config, error)) (contextindex.Embedder, error) {
	switch cfg.Embedder {
	case config.EmbedderNone, "":
		return nil, nil
	case config.EmbedderBedrock:
		ac, err := awsConfig(ctx)
		if err != nil {
			return nil, err
		}
		return NewBedrock(NewBedrockClient(ac), cfg.EmbedDimensions), nil
	case config.EmbedderOpenAI:
		return NewOpenAI(OpenAIOptions{URL: cfg.EmbedURL, Model: cfg.EmbedModel, Key: cfg.EmbedKey, Dimensions: cfg.EmbedDimensions})
	}
	return nil, fmt.Errorf("unknown embedder %q", cfg.Embedder)
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
