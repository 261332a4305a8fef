package awscall

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
)

// Bounds of every AWS call (DynamoDB, S3, Bedrock) Toolshed makes, so that
// a dependency that hangs or refuses becomes STORAGE_ERROR (or
// UPSTREAM_ERROR) well inside the tool's deadline, while a slow but
// progressing transfer (a large snapshot going up or down) is left alone.
const (
	// AttemptStall is how long one attempt may go without progress — no
	// connection, no byte of the request sent, no byte of the answer
	// received — before it is abandoned and retried (see stallConn). An
	// object larger than a few MB moves in parts (package objects), each
	// part a request of its own with its own attempts.
	AttemptStall = 800 * time.Millisecond
	// PatientStall is AttemptStall for a call its service may think over
	// for long before answering, marked with Patiently: S3 putting the
	// parts of a large object together (CompleteMultipartUpload) takes
	// seconds, for the largest minutes, sending at most spaces meanwhile.
	PatientStall = time.Minute
	// MaxAttempts bounds each call's attempts (the first and one retry).
	MaxAttempts = 2
	// MaxRetryBackoff bounds the jittered wait before a retry.
	MaxRetryBackoff = 100 * time.Millisecond
)

// LoadConfig loads the AWS SDK configuration (region, credentials,
// endpoints and CA bundle from the environment) with the SDK's standard
// retryer (jittered backoff, a retry quota that stops retries when a
// dependency keeps failing) bounded to MaxAttempts and MaxRetryBackoff,
// and connections that give up on an attempt stalled for AttemptStall.
// A call for which no credentials are found fails with a
// NoCredentialsError.
func LoadConfig(ctx context.Context) (aws.Config, error) {
	c, err := awsconfig.LoadDefaultConfig(ctx,
		awsconfig.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = MaxAttempts
				o.MaxBackoff = MaxRetryBackoff
			})
		}),
	)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS config: %w", err)
	}
	// The configuration's client, if any, carries a custom CA bundle.
	client, ok := c.HTTPClient.(*awshttp.BuildableClient)
	if !ok {
		client = awshttp.NewBuildableClient()
	}
	c.HTTPClient = bounded(client)
	if c.Credentials != nil {
		c.Credentials = explained{c.Credentials}
	}
	return c, nil
}

// bounded returns client with this package's bounds: AttemptStall, or
// PatientStall for the requests marked Patiently.
func bounded(client *awshttp.BuildableClient) aws.HTTPClient {
	return stallClients{quick: stallBounded(client, AttemptStall), patient: stallBounded(client, PatientStall)}
}

// Patiently marks ctx for a call its service may think over for long
// before answering: its attempts wait up to PatientStall without progress.
func Patiently(ctx context.Context) context.Context {
	return context.WithValue(ctx, patientKey{}, true)
}

// patientKey marks a context with Patiently.
type patientKey struct{}

// stallClients sends each request through the client its context asks
// for (Patiently).
type stallClients struct{ quick, patient aws.HTTPClient }

// Do implements aws.HTTPClient.
func (c stallClients) Do(r *http.Request) (*http.Response, error) {
	if r.Context().Value(patientKey{}) != nil {
		return c.patient.Do(r)
	}
	return c.quick.Do(r)
}

// stallBounded returns client with connections that fail after stall
// without progress (stallDialer) in place of the SDK's own read timeout,
// which counts only bytes received: a request whose body takes longer
// than that to send would fail while it progresses. It is frozen so the
// SDK's per-service defaults cannot replace the dialer.
func stallBounded(client *awshttp.BuildableClient, stall time.Duration) aws.HTTPClient {
	return client.
		WithReadTimeout(0).
		WithTransportOptions(func(tr *http.Transport) { tr.DialContext = stallDialer(stall) }).
		Freeze()
}
