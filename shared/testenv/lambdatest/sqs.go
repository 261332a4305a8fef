package lambdatest

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Invoker runs invocations: a Function, or a Pool of them.
type Invoker interface {
	Invoke(ctx context.Context, event []byte) (Response, error)
}

// SQSConfig describes an SQS event source mapping.
type SQSConfig struct {
	Client   *sqs.Client
	QueueURL string
	QueueArn string
	// BatchSize is the most messages in one event (1 to 10; 0: 10).
	BatchSize int
	// Concurrency is how many events may be in flight at once (Lambda's
	// maximum concurrency of the mapping; 0: 1).
	Concurrency int
	// Target runs the events.
	Target Invoker
	// Region is the event's awsRegion ("" for DefaultRegion).
	Region string
}

// SQSSource stands in for an SQS event source mapping, as Lambda's
// pollers run it: it receives batches of messages from a queue (on
// moto_server), hands each to the target as an SQS event (records with
// the message id, receipt handle, body and attributes, among them
// ApproximateReceiveCount), and deletes the messages of an invocation that
// succeeded, except those its response lists in batchItemFailures
// (ReportBatchItemFailures). A failed invocation deletes none: its
// messages come back when the queue's visibility timeout ends, and go to
// the queue's dead-letter queue after its maximum receives.
type SQSSource struct {
	cfg    SQSConfig
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// Events counts the events invoked; Failed, those whose invocation
	// failed; Deleted, the messages deleted.
	Events, Failed, Deleted atomic.Int64
}

// StartSQS starts polling. Stop ends it.
func StartSQS(cfg SQSConfig) *SQSSource {
	if cfg.BatchSize <= 0 || cfg.BatchSize > 10 {
		cfg.BatchSize = 10
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &SQSSource{cfg: cfg, cancel: cancel}
	for range max(cfg.Concurrency, 1) {
		s.wg.Go(func() { s.poll(ctx) })
	}
	return s
}

// Stop ends polling and waits for the events in flight.
func (s *SQSSource) Stop() {
	s.cancel()
	s.wg.Wait()
}

// pollWait is how long one receive waits for messages (long polling).
const pollWait = 1

// poll receives and runs events until ctx ends.
func (s *SQSSource) poll(ctx context.Context) {
	for ctx.Err() == nil {
		out, err := s.cfg.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    aws.String(s.cfg.QueueURL),
			MaxNumberOfMessages:         int32(s.cfg.BatchSize),
			WaitTimeSeconds:             pollWait,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		})
		if err != nil {
			if ctx.Err() == nil {
				time.Sleep(100 * time.Millisecond) // the emulator restarting, say
			}
			continue
		}
		if len(out.Messages) > 0 {
			s.run(ctx, out.Messages)
		}
	}
}

// run invokes the target with one batch and deletes what succeeded.
func (s *SQSSource) run(ctx context.Context, msgs []types.Message) {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(msgs))}
	for i, m := range msgs {
		ev.Records[i] = events.SQSMessage{
			MessageId:      aws.ToString(m.MessageId),
			ReceiptHandle:  aws.ToString(m.ReceiptHandle),
			Body:           aws.ToString(m.Body),
			Md5OfBody:      aws.ToString(m.MD5OfBody),
			Attributes:     m.Attributes,
			EventSource:    "aws:sqs",
			EventSourceARN: s.cfg.QueueArn,
			AWSRegion:      s.cfg.Region,
		}
	}
	raw, _ := json.Marshal(ev)
	s.Events.Add(1)
	resp, err := s.cfg.Target.Invoke(ctx, raw)
	if err != nil || resp.FunctionError != "" {
		s.Failed.Add(1)
		return
	}
	var answer events.SQSEventResponse
	_ = json.Unmarshal(resp.Payload, &answer) // an answer of another shape fails no item
	failed := map[string]bool{}
	for _, f := range answer.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	var entries []types.DeleteMessageBatchRequestEntry
	for i, m := range msgs {
		if !failed[aws.ToString(m.MessageId)] {
			entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
	}
	if len(entries) == 0 {
		return
	}
	del, err := s.cfg.Client.DeleteMessageBatch(context.WithoutCancel(ctx), &sqs.DeleteMessageBatchInput{
		QueueUrl: aws.String(s.cfg.QueueURL), Entries: entries,
	})
	if err == nil {
		s.Deleted.Add(int64(len(del.Successful)))
	}
}
