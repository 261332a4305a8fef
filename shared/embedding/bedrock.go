package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/smithy-go"
	"github.com/toolshed/toolshed/shared/contextindex"
)

// TitanV2 is the Bedrock model id of Amazon Titan Text Embeddings V2, the
// only Bedrock model the deployed functions may invoke.
const TitanV2 = "amazon.titan-embed-text-v2:0"

// TitanDefaultQuota is the on-demand quota the deployment plans for, an
// account's for Titan V2 unless it asked for more (see docs/embedding.md
// for what AWS publishes about it and where this value comes from).
var TitanDefaultQuota = Pace{RequestsPerMinute: 2000, TokensPerMinute: 300000}

// PaceHeadroom is the part of a quota a pace uses: requests sent at
// exactly the quota's rate reach the provider a little bunched (network
// and scheduling jitter) and some are throttled; a tenth of headroom
// absorbs that.
const PaceHeadroom = 0.9

// TitanDimensions are the vector sizes Titan V2 offers.
var TitanDimensions = []int{256, 512, 1024}

// bedrockParallel is how many texts Bedrock embeds at once: Titan takes
// one text per request.
const bedrockParallel = 8

// bedrockAttempts bounds the SDK's attempts per request (throttling and
// server errors are retried with backoff).
const bedrockAttempts = 6

// NewBedrockClient returns a bedrockruntime client that retries throttling
// (ThrottlingException, 429) and server errors with exponential backoff.
func NewBedrockClient(cfg aws.Config, optFns ...func(*bedrockruntime.Options)) *bedrockruntime.Client {
	opts := append([]func(*bedrockruntime.Options){func(o *bedrockruntime.Options) {
		o.Retryer = retry.NewStandard(func(s *retry.StandardOptions) {
			s.MaxAttempts = bedrockAttempts
			s.MaxBackoff = 10 * time.Second
		})
	}}, optFns...)
	return bedrockruntime.NewFromConfig(cfg, opts...)
}

// Bedrock embeds with Titan Text Embeddings V2: one text per
// InvokeModel at the configured dimensions, paced within the process's
// share of the account's quota, throttling retried by the client with
// backoff. It counts the input tokens Bedrock reports (what it bills).
type Bedrock struct {
	client *bedrockruntime.Client
	dims   int
	pace   *pacer
	tokens atomic.Int64
}

var _ contextindex.Embedder = (*Bedrock)(nil)

// NewBedrock returns the Titan V2 embedder making vectors of dims (256,
// 512 or 1024) dimensions, its requests held within pace.
func NewBedrock(client *bedrockruntime.Client, dims int, pace Pace) *Bedrock {
	return &Bedrock{client: client, dims: dims, pace: newPacer(pace, time.Now)}
}

// Tokens is how many input tokens Bedrock has counted so far.
func (b *Bedrock) Tokens() int64 { return b.tokens.Load() }

// Model implements contextindex.Embedder: "amazon.titan-embed-text-v2:0/512".
func (b *Bedrock) Model() string { return fmt.Sprintf("%s/%d", TitanV2, b.dims) }

// TextsPerRequest is 1: Titan embeds one text per InvokeModel.
func (b *Bedrock) TextsPerRequest() int { return 1 }

// titanRequest and titanResponse are Titan V2's InvokeModel body and answer.
type titanRequest struct {
	InputText      string   `json:"inputText"`
	Dimensions     int      `json:"dimensions"`
	Normalize      bool     `json:"normalize"`
	EmbeddingTypes []string `json:"embeddingTypes"`
}

type titanResponse struct {
	Embedding           []float32 `json:"embedding"`
	InputTextTokenCount int       `json:"inputTextTokenCount"`
}

// Embed implements contextindex.Embedder: one InvokeModel per text,
// bedrockParallel at a time.
func (b *Bedrock) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	errs := make([]error, len(texts))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, bedrockParallel)
	var wg sync.WaitGroup
	for i, t := range texts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errs[i] = b.one(ctx, t)
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	// Report the failure that cancelled the others, not their cancellation.
	var first error
	for _, err := range errs {
		if err != nil && (first == nil || errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled)) {
			first = err
		}
	}
	if first != nil {
		return nil, first
	}
	return out, nil
}

func (b *Bedrock) one(ctx context.Context, text string) ([]float32, error) {
	body, _ := json.Marshal(titanRequest{InputText: text, Dimensions: b.dims, Normalize: true, EmbeddingTypes: []string{"float"}})
	estimated := estimateTokens(text)
	if err := b.pace.take(ctx, estimated); err != nil {
		return nil, fmt.Errorf("bedrock %s: %w", TitanV2, err)
	}
	res, err := b.client.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
		ModelId:     aws.String(TitanV2),
		ContentType: aws.String("application/json"),
		Accept:      aws.String("application/json"),
		Body:        body,
	})
	if err != nil {
		b.pace.settle(estimated, 0)
		return nil, fmt.Errorf("bedrock %s: %w", TitanV2, classify(err))
	}
	var r titanResponse
	if err := json.Unmarshal(res.Body, &r); err != nil {
		b.pace.settle(estimated, 0)
		return nil, fmt.Errorf("bedrock %s: decode the answer: %w", TitanV2, err)
	}
	b.pace.settle(estimated, r.InputTextTokenCount)
	b.tokens.Add(int64(r.InputTextTokenCount))
	if len(r.Embedding) != b.dims {
		return nil, fmt.Errorf("bedrock %s: got %d dimensions, asked for %d", TitanV2, len(r.Embedding), b.dims)
	}
	return r.Embedding, nil
}

// classify adds to an InvokeModel error why it failed, when it is worth
// trying again later: ErrThrottled for Bedrock's ThrottlingException,
// ErrUnavailable for its server-side errors and for requests that never
// got an answer (the context's own end is left as it is).
func classify(err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "ThrottlingException":
			return fmt.Errorf("%w: %w", ErrThrottled, err)
		case "ServiceUnavailableException", "InternalServerException", "ModelNotReadyException", "ModelTimeoutException":
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}
