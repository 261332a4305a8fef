package emulator_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
)

// TestMotoS3 checks the S3 behaviour the repository, index and workspace
// code relies on: put, get, conditional get by ETag and conditional put.
func TestMotoS3(t *testing.T) {
	m := emulator.StartMoto(t)
	bucket := m.NewBucket(t)
	c := m.S3()
	ctx := context.Background()

	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("a/b.txt"), Body: strings.NewReader("hello")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("a/b.txt")})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(got.Body)
	got.Body.Close()
	if string(body) != "hello" || aws.ToString(got.ETag) != aws.ToString(put.ETag) {
		t.Fatalf("got %q etag %s, want hello etag %s", body, aws.ToString(got.ETag), aws.ToString(put.ETag))
	}

	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("a/b.txt"), IfNoneMatch: put.ETag})
	if code := apiCode(err); code != "NotModified" && code != "304" {
		t.Errorf("conditional get with the current ETag: got %v, want 304 Not Modified", err)
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("a/b.txt"), Body: strings.NewReader("x"), IfNoneMatch: aws.String("*")})
	if code := apiCode(err); code != "PreconditionFailed" {
		t.Errorf("conditional put over an existing key: got %v, want PreconditionFailed", err)
	}
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}
