package indexer

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Queue takes batch messages: the index queue (SQS) that the index
// worker function reads.
type Queue interface {
	Send(ctx context.Context, bodies [][]byte) error
	// RetryAfter makes a message received (its receipt handle) come back
	// after d rather than after the queue's visibility timeout.
	RetryAfter(ctx context.Context, receipt string, d time.Duration) error
}

// SQSQueue sends to an SQS queue.
type SQSQueue struct {
	Client *sqs.Client
	URL    string
}

var _ Queue = (*SQSQueue)(nil)

// sqsBatch is how many messages one SendMessageBatch carries (SQS's
// most).
const sqsBatch = 10

// Send implements Queue, ten messages per request. A message SQS refuses
// is an error naming why; the caller sends again (batches are idempotent).
func (q *SQSQueue) Send(ctx context.Context, bodies [][]byte) error {
	for start := 0; start < len(bodies); start += sqsBatch {
		part := bodies[start:min(start+sqsBatch, len(bodies))]
		entries := make([]types.SendMessageBatchRequestEntry, len(part))
		for i, b := range part {
			entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(string(b))}
		}
		out, err := q.Client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.URL), Entries: entries})
		if err != nil {
			return fmt.Errorf("send %d batch messages: %w", len(part), err)
		}
		if len(out.Failed) > 0 {
			f := out.Failed[0]
			return fmt.Errorf("send batch messages: %d refused, the first: %s %s", len(out.Failed), aws.ToString(f.Code), aws.ToString(f.Message))
		}
	}
	return nil
}

// RetryAfter implements Queue with ChangeMessageVisibility.
func (q *SQSQueue) RetryAfter(ctx context.Context, receipt string, d time.Duration) error {
	_, err := q.Client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(q.URL),
		ReceiptHandle: aws.String(receipt), VisibilityTimeout: int32(d.Seconds())})
	if err != nil {
		return fmt.Errorf("delay a batch message's retry: %w", err)
	}
	return nil
}
