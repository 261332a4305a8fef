package indexer

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Queue takes batch messages: the index queue (SQS) that the index
// worker function reads.
type Queue interface {
	Send(ctx context.Context, bodies [][]byte) error
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
