package awscall_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/toolshed/toolshed/shared/awscall"
	"github.com/toolshed/toolshed/shared/store"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
)

// TestNoCredentials: a call made where no AWS credentials can be found
// fails before it is sent, with an error that says so and how to provide
// them (not the SDK's "no EC2 IMDS role found", nor "storage
// unavailable"), and is still a storage error for the tools.
func TestNoCredentials(t *testing.T) {
	emulator.NoCredentials(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a request without credentials was sent: %s %s", r.Method, r.URL)
	}))
	defer srv.Close()
	cfg, err := awscall.LoadConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.BaseEndpoint, o.UsePathStyle = aws.String(srv.URL), true })
	_, err = client.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("k")})
	if _, ok := awscall.NoCredentials(err); !ok {
		t.Fatalf("GetObject without credentials: %v, want a NoCredentialsError", err)
	}
	wrapped := awscall.Wrap("S3", "s3 read b/k", err, false)
	msg := wrapped.Error()
	for _, want := range []string{"s3 read b/k: no AWS credentials found: ", "AWS_PROFILE", "AWS_ACCESS_KEY_ID"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "storage unavailable") || !errors.Is(wrapped, store.ErrStorage) {
		t.Errorf("message %q: want a storage error that does not say storage unavailable", msg)
	}
}
