package awscall

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
)

// Bounds of every AWS call (DynamoDB, S3, Bedrock) Toolshed makes, so that
// a dependency that hangs or refuses becomes STORAGE_ERROR (or
// UPSTREAM_ERROR) well inside the tool's deadline, while a slow but
// progressing transfer (a large snapshot download) is left alone.
const (
	// AttemptStall is how long one attempt may wait for the connection or
	// for the next byte of the answer before it is abandoned and retried.
	AttemptStall = 800 * time.Millisecond
	// MaxAttempts bounds each call's attempts (the first and one retry).
	MaxAttempts = 2
	// MaxRetryBackoff bounds the jittered wait before a retry.
	MaxRetryBackoff = 100 * time.Millisecond
)

// LoadConfig loads the AWS SDK configuration (region, credentials,
// endpoints from the environment) with the SDK's standard retryer
// (jittered backoff, a retry quota that stops retries when a dependency
// keeps failing) bounded to MaxAttempts and MaxRetryBackoff, and
// connections that give up on an attempt stalled for AttemptStall.
func LoadConfig(ctx context.Context) (aws.Config, error) {
	c, err := awsconfig.LoadDefaultConfig(ctx,
		awsconfig.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = MaxAttempts
				o.MaxBackoff = MaxRetryBackoff
			})
		}),
		awsconfig.WithHTTPClient(awshttp.NewBuildableClient().
			WithReadTimeout(AttemptStall).
			WithDialerOptions(func(d *net.Dialer) { d.Timeout = AttemptStall })),
	)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS config: %w", err)
	}
	return c, nil
}
