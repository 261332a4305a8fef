package emulator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
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

// Moto is a running moto_server: a real implementation of the S3 API
// (conditional GET and PUT, ETags, listing) on loopback.
type Moto struct {
	// Endpoint is the base URL, e.g. http://127.0.0.1:40123.
	Endpoint string
	// Process controls it (fault tests hang, kill and restart it; a
	// restarted moto_server has lost its buckets).
	Process *Process
}

// StartMoto runs moto_server for the test. It needs python3 with moto
// installed (moto_server is preinstalled on the development machines).
func StartMoto(t testing.TB) *Moto {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("emulator: python3 is not on PATH (%v); moto_server needs it", err)
	}
	proc := StartProcess(t, "moto_server", func(port int) *exec.Cmd {
		return exec.Command(python, "-c", motoMain, strconv.Itoa(port))
	})
	return &Moto{Endpoint: "http://" + proc.Addr, Process: proc}
}

// S3 returns an S3 client for the server: path-style addressing, dummy
// static credentials, region us-east-1, one attempt per call.
func (m *Moto) S3() *s3.Client {
	httpClient := awshttp.NewBuildableClient().
		WithTimeout(30 * time.Second).
		WithTransportOptions(func(tr *http.Transport) {
			tr.MaxIdleConnsPerHost = 32
			tr.IdleConnTimeout = 2 * time.Second
		})
	return s3.New(s3.Options{
		Region:           "us-east-1",
		Credentials:      credentials.NewStaticCredentialsProvider("dummy", "dummy", ""),
		BaseEndpoint:     aws.String(m.Endpoint),
		UsePathStyle:     true,
		HTTPClient:       httpClient,
		RetryMaxAttempts: 1,
	})
}

// NewBucket creates a bucket with a unique name and returns the name.
func (m *Moto) NewBucket(t testing.TB) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	name := "toolshed-test-" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := m.S3().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatalf("emulator: create bucket %s: %v", name, err)
	}
	return name
}
