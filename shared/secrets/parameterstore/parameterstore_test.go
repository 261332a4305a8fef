package parameterstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/toolshed/toolshed/shared/secrets/parameterstore"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
)

// TestFetch reads a SecureString parameter from Parameter Store on
// moto_server.
func TestFetch(t *testing.T) {
	moto := emulator.StartMoto(t)
	cfg := aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("dummy", "dummy", ""),
		BaseEndpoint: aws.String(moto.Endpoint),
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := ssm.NewFromConfig(cfg).PutParameter(ctx, &ssm.PutParameterInput{Name: aws.String("/toolshed/embed-key"),
		Value: aws.String("sk-secret"), Type: types.ParameterTypeSecureString}); err != nil {
		t.Fatal(err)
	}
	fetch := parameterstore.Fetch(cfg)
	got, err := fetch(ctx, "/toolshed/embed-key")
	if err != nil || got != "sk-secret" {
		t.Errorf("got %q, %v; want the decrypted value", got, err)
	}
	if _, err := fetch(ctx, "/toolshed/none"); err == nil {
		t.Error("a missing parameter: no error")
	}
}
