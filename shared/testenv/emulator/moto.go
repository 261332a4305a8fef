package emulator

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// motoMain runs moto's server (argv: port) and exits when standard input
// closes, so an orphaned server never outlives the test process.
const motoMain = `import os, sys, threading
def watch():
    sys.stdin.read()
    os._exit(0)
threading.Thread(target=watch, daemon=True).start()
from moto.server import main
main(["-H", "127.0.0.1", "-p", sys.argv[1]])`

// Moto is a running moto_server on loopback: a real implementation of the
// S3 API (conditional GET and PUT, ETags, listing, multipart uploads,
// ranged GETs), of SQS (visibility timeouts, dead-letter queues), and of
// CloudFormation and Parameter Store as far as the tests use them. Unlike
// S3 it takes multipart parts from MinPartSize bytes (S3: 5 MiB), so tests
// of large objects stay small.
type Moto struct {
	// Endpoint is the base URL, e.g. http://127.0.0.1:40123.
	Endpoint string
	// Process controls it (fault tests hang, kill and restart it; a
	// restarted moto_server has lost its buckets).
	Process *Process
}

// MinPartSize is the smallest part (but the last) of a multipart upload
// moto_server takes.
const MinPartSize = 1 << 10

// StartMoto runs moto_server for the test. It needs python3 with moto
// installed (moto_server is preinstalled on the development machines).
func StartMoto(t testing.TB) *Moto {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("emulator: python3 is not on PATH (%v); moto_server needs it", err)
	}
	proc := StartProcess(t, "moto_server", func(port int) *exec.Cmd {
		cmd := exec.Command(python, "-c", motoMain, strconv.Itoa(port))
		cmd.Env = append(os.Environ(), "S3_UPLOAD_PART_MIN_SIZE="+strconv.Itoa(MinPartSize),
			// moto derives its in-memory buffer per object from the part
			// size unless told; this keeps its default.
			"MOTO_S3_DEFAULT_KEY_BUFFER_SIZE="+strconv.Itoa(5<<20-1024))
		return cmd
	})
	return &Moto{Endpoint: "http://" + proc.Addr, Process: proc}
}

// ClientConfig is the configuration of clients for an emulator at
// endpoint (moto_server, dynalite): dummy static credentials, region
// us-east-1, one attempt per call. Callers may change any of it before
// making a client.
func ClientConfig(endpoint string) aws.Config {
	return aws.Config{
		Region:           "us-east-1",
		Credentials:      credentials.NewStaticCredentialsProvider("dummy", "dummy", ""),
		BaseEndpoint:     aws.String(endpoint),
		RetryMaxAttempts: 1,
	}
}

// S3 returns an S3 client for the server: path-style addressing, dummy
// static credentials, region us-east-1, one attempt per call.
func (m *Moto) S3() *s3.Client { return S3Client(m.Endpoint) }

// S3Client is Moto.S3 for another endpoint (a Proxy's URL).
func S3Client(endpoint string) *s3.Client {
	cfg := ClientConfig(endpoint)
	cfg.HTTPClient = awshttp.NewBuildableClient().
		WithTimeout(30 * time.Second).
		WithTransportOptions(func(tr *http.Transport) {
			tr.MaxIdleConnsPerHost = 32
			tr.IdleConnTimeout = 2 * time.Second
		})
	return s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
}

// NewBucket creates a bucket with a unique name and returns the name.
func (m *Moto) NewBucket(t testing.TB) string {
	t.Helper()
	name := UniqueName()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := m.S3().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("emulator: create bucket %s: %v", name, err)
	}
	return name
}

// CloudFormation returns a CloudFormation client for the server (dummy
// static credentials, region us-east-1, one attempt per call).
func (m *Moto) CloudFormation() *cloudformation.Client {
	return cloudformation.NewFromConfig(ClientConfig(m.Endpoint))
}

// CreateStack creates a stack named name whose outputs are outputs (and
// whose one resource is an SNS topic), as a deployment leaves them.
func (m *Moto) CreateStack(t testing.TB, name string, outputs map[string]string) {
	t.Helper()
	tmpl := map[string]any{
		"Resources": map[string]any{"Topic": map[string]any{"Type": "AWS::SNS::Topic"}},
		"Outputs":   map[string]any{},
	}
	for k, v := range outputs {
		tmpl["Outputs"].(map[string]any)[k] = map[string]any{"Value": v}
	}
	body, err := json.Marshal(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := m.CloudFormation().CreateStack(ctx, &cloudformation.CreateStackInput{
		StackName: aws.String(name), TemplateBody: aws.String(string(body)),
	}); err != nil {
		t.Fatalf("emulator: create stack %s: %v", name, err)
	}
}

// SQS returns an SQS client for the server (dummy static credentials,
// region us-east-1, one attempt per call).
func (m *Moto) SQS() *sqs.Client {
	return sqs.NewFromConfig(ClientConfig(m.Endpoint))
}

// Queue is an SQS queue with its dead-letter queue.
type Queue struct {
	URL, Arn      string
	DeadLetterURL string
}

// NewQueue creates a queue with a unique name whose messages, when not
// deleted, come back after visibility (whole seconds) and go to its
// dead-letter queue after maxReceives receives.
func (m *Moto) NewQueue(t testing.TB, visibility time.Duration, maxReceives int) Queue {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := UniqueName()
	client := m.SQS()
	create := func(name string, attrs map[string]string) (url, arn string) {
		out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
		if err != nil {
			t.Fatalf("emulator: create queue %s: %v", name, err)
		}
		got, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl,
			AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
		if err != nil {
			t.Fatalf("emulator: queue %s: %v", name, err)
		}
		return aws.ToString(out.QueueUrl), got.Attributes[string(types.QueueAttributeNameQueueArn)]
	}
	dlqURL, dlqArn := create(name+"-dlq", nil)
	redrive, _ := json.Marshal(map[string]any{"deadLetterTargetArn": dlqArn, "maxReceiveCount": maxReceives})
	url, arn := create(name, map[string]string{
		"VisibilityTimeout": strconv.Itoa(int(visibility.Seconds())),
		"RedrivePolicy":     string(redrive),
	})
	return Queue{URL: url, Arn: arn, DeadLetterURL: dlqURL}
}
